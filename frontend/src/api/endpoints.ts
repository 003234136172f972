// Every call the app makes, in one place: paths, parameters, bodies and answers are all typed by
// the generated OpenAPI types (schema.d.ts).
import { http, unwrap } from "./client";
import type { Schemas } from "./types";

type ConvParams = {
  archived?: boolean;
  starred?: boolean;
  project_id?: string;
  cursor?: string;
  limit?: number;
};

export const api = {
  me: () => unwrap(http.GET("/api/me")),
  /** The session's user or null (never a 401: a logged-out visitor makes no failing request). */
  session: () => unwrap(http.GET("/api/auth/session")),
  patchMe: (body: Schemas["MePatch"]) => unwrap(http.PATCH("/api/me", { body })),
  changePassword: (body: Schemas["PasswordIn"]) =>
    unwrap(http.POST("/api/me/password", { body })),
  login: (body: Schemas["LoginIn"]) =>
    unwrap(http.POST("/api/auth/login", { body })),
  logout: () => unwrap(http.POST("/api/auth/logout")),

  conversations: (query: ConvParams) =>
    unwrap(http.GET("/api/conversations", { params: { query } })),
  conversation: (cid: string) =>
    unwrap(http.GET("/api/conversations/{cid}", { params: { path: { cid } } })),
  createConversation: (body: Schemas["ConversationIn"]) =>
    unwrap(http.POST("/api/conversations", { body })),
  patchConversation: (cid: string, body: Schemas["ConversationPatch"]) =>
    unwrap(
      http.PATCH("/api/conversations/{cid}", { params: { path: { cid } }, body }),
    ),
  deleteConversation: (cid: string) =>
    unwrap(http.DELETE("/api/conversations/{cid}", { params: { path: { cid } } })),

  messages: (cid: string, query: { before?: string; limit?: number }) =>
    unwrap(
      http.GET("/api/conversations/{cid}/messages", { params: { path: { cid }, query } }),
    ),
  message: (cid: string, mid: string) =>
    unwrap(
      http.GET("/api/conversations/{cid}/messages/{mid}", { params: { path: { cid, mid } } }),
    ),
  editMessage: (cid: string, mid: string, content: string) =>
    unwrap(
      http.PATCH("/api/conversations/{cid}/messages/{mid}", {
        params: { path: { cid, mid } },
        body: { content },
      }),
    ),
  deleteRound: (cid: string, mid: string) =>
    unwrap(
      http.DELETE("/api/conversations/{cid}/messages/{mid}", { params: { path: { cid, mid } } }),
    ),
  switchLeaf: (cid: string, leaf_id: string) =>
    unwrap(
      http.PATCH("/api/conversations/{cid}/active-leaf", {
        params: { path: { cid } },
        body: { leaf_id },
      }),
    ),
  fork: (cid: string, body: Schemas["ForkIn"]) =>
    unwrap(
      http.POST("/api/conversations/{cid}/fork", { params: { path: { cid } }, body }),
    ),
  stop: (cid: string, message_id?: string) =>
    unwrap(
      http.POST("/api/conversations/{cid}/stop", {
        params: { path: { cid } },
        body: { message_id: message_id ?? null },
      }),
    ),
  createThread: (cid: string, body: Schemas["InlineThreadIn"]) =>
    unwrap(
      http.POST("/api/conversations/{cid}/inline-threads", { params: { path: { cid } }, body }),
    ),
  threads: (cid: string, message_id?: string) =>
    unwrap(
      http.GET("/api/conversations/{cid}/inline-threads", {
        params: { path: { cid }, query: { message_id } },
      }),
    ),

  models: () => unwrap(http.GET("/api/models")),
  search: (q: string) => unwrap(http.GET("/api/search", { params: { query: { q } } })),

  projects: () => unwrap(http.GET("/api/projects")),
  createProject: (body: Schemas["ProjectIn"]) =>
    unwrap(http.POST("/api/projects", { body })),
  patchProject: (id: string, body: Schemas["ProjectPatch"]) =>
    unwrap(
      http.PATCH("/api/projects/{obj_id}", { params: { path: { obj_id: id } }, body }),
    ),
  deleteProject: (id: string) =>
    unwrap(http.DELETE("/api/projects/{obj_id}", { params: { path: { obj_id: id } } })),
};

/** The two ways a turn starts (both answer with the SSE stream). */
export function turnRequest(
  cid: string,
  kind: "send" | "regenerate",
  body: Record<string, unknown>,
): { path: string; init: RequestInit } {
  const path =
    kind === "send"
      ? `/api/conversations/${encodeURIComponent(cid)}/messages`
      : `/api/conversations/${encodeURIComponent(cid)}/regenerate`;
  return {
    path,
    init: {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
      body: JSON.stringify(body),
    },
  };
}

export function streamPath(cid: string, mid: string, after: number): string {
  return `/api/conversations/${encodeURIComponent(cid)}/messages/${encodeURIComponent(
    mid,
  )}/stream?last_event_id=${after}`;
}
