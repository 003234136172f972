// Calls of the memory library, the context report, feedback and sharing (part 2 of the app).
// Kept beside endpoints.ts so the two halves of the app can grow without touching one file.
import { http, unwrap } from "./client";
import type { Schemas } from "./types";

export type Memory = Schemas["MemoryOut"];
export type MemoryHistory = Schemas["MemoryHistory"];
export type ContextOut = Schemas["ContextOut"];
export type Share = Schemas["ShareOut"];
export type Rating = Schemas["RatingOut"];

export interface MemoryQuery {
  status?: string[];
  type?: string;
  agent_id?: string;
  q?: string;
  cursor?: string;
  limit?: number;
}

export const lib = {
  memories: (query: MemoryQuery) => unwrap(http.GET("/api/me/memories", { params: { query } })),
  memory: (mid: string) =>
    unwrap(http.GET("/api/me/memories/{mid}", { params: { path: { mid } } })),
  createMemory: (body: Schemas["MemoryIn"]) => unwrap(http.POST("/api/me/memories", { body })),
  patchMemory: (mid: string, body: Schemas["MemoryPatch"]) =>
    unwrap(http.PATCH("/api/me/memories/{mid}", { params: { path: { mid } }, body })),
  deleteMemory: (mid: string, purge = false) =>
    unwrap(
      http.DELETE("/api/me/memories/{mid}", { params: { path: { mid }, query: { purge } } }),
    ),
  memoryHistory: (mid: string) =>
    unwrap(http.GET("/api/me/memories/{mid}/history", { params: { path: { mid } } })),

  agents: () => unwrap(http.GET("/api/agents")),

  context: (cid: string, message_id?: string) =>
    unwrap(
      http.GET("/api/conversations/{cid}/context", {
        params: { path: { cid }, query: message_id ? { message_id } : {} },
      }),
    ),

  rating: (cid: string, mid: string) =>
    unwrap(
      http.GET("/api/conversations/{cid}/messages/{mid}/feedback", {
        params: { path: { cid, mid } },
      }),
    ),
  rate: (cid: string, mid: string, body: Schemas["FeedbackIn"]) =>
    unwrap(
      http.POST("/api/conversations/{cid}/messages/{mid}/feedback", {
        params: { path: { cid, mid } },
        body,
      }),
    ),

  share: (cid: string) =>
    unwrap(http.GET("/api/conversations/{cid}/share", { params: { path: { cid } } })),
  createShare: (cid: string) =>
    unwrap(http.POST("/api/conversations/{cid}/share", { params: { path: { cid } } })),
  revokeShare: (cid: string) =>
    unwrap(http.DELETE("/api/conversations/{cid}/share", { params: { path: { cid } } })),
};
