// The workspace calls the app makes (typed by the generated OpenAPI types): workspaces, members,
// invitations, and a workspace's conversation list.
import { useQuery } from "@tanstack/react-query";
import { ApiError, http, unwrap } from "../api/client";
import type { Schemas } from "../api/types";
import { errorText, useT } from "../i18n";
import { toast } from "../ui/toast";

export type Workspace = Schemas["WorkspaceOut"];
export type Member = Schemas["MemberOut"];
type P = { params: { path: { wid: string } } };
const at = (wid: string): P => ({ params: { path: { wid } } });

export const wsApi = {
  list: () => unwrap(http.GET("/api/workspaces")),
  get: (wid: string) => unwrap(http.GET("/api/workspaces/{wid}", at(wid))),
  create: (name: string) => unwrap(http.POST("/api/workspaces", { body: { name } })),
  members: (wid: string) => unwrap(http.GET("/api/workspaces/{wid}/members", at(wid))),
  setRole: (wid: string, uid: string, role: "admin" | "member") =>
    unwrap(
      http.PATCH("/api/workspaces/{wid}/members/{uid}", {
        params: { path: { wid, uid } },
        body: { role },
      }),
    ),
  remove: (wid: string, uid: string) =>
    unwrap(
      http.DELETE("/api/workspaces/{wid}/members/{uid}", { params: { path: { wid, uid } } }),
    ),
  invite: (wid: string, body: Schemas["InviteIn"]) =>
    unwrap(http.POST("/api/workspaces/{wid}/invites", { ...at(wid), body })),
  join: (token: string) => unwrap(http.POST("/api/workspace-invites/join", { body: { token } })),
  myInvites: () => unwrap(http.GET("/api/workspace-invites")),
  accept: (iid: string) =>
    unwrap(http.POST("/api/workspace-invites/{iid}/accept", { params: { path: { iid } } })),
  decline: (iid: string) =>
    unwrap(http.DELETE("/api/workspace-invites/{iid}", { params: { path: { iid } } })),
  createConversation: (workspace_id: string, is_public: boolean) =>
    unwrap(http.POST("/api/conversations", { body: { workspace_id, is_public } })),
  conversations: (workspace_id: string) =>
    unwrap(http.GET("/api/conversations", { params: { query: { workspace_id, limit: 100 } } })),
};

export const wsKeys = {
  all: ["workspaces"] as const,
  members: (wid: string) => ["workspaces", wid, "members"] as const,
  conversations: (wid: string) => ["conversations", { workspace_id: wid }] as const,
  invites: ["workspace-invites"] as const,
};

export function useWorkspaces() {
  return useQuery({ queryKey: wsKeys.all, queryFn: wsApi.list, staleTime: 30_000 });
}

export function useMembers(wid: string | undefined) {
  return useQuery({
    queryKey: wsKeys.members(wid || ""),
    queryFn: () => wsApi.members(wid!),
    enabled: !!wid,
    retry: false,
  });
}

/** user id → the name shown beside their messages in a shared conversation. */
export function useAuthors(wid: string | undefined): Record<string, string> | undefined {
  const members = useMembers(wid).data?.items;
  if (!wid || !members) return undefined;
  return Object.fromEntries(members.map((m) => [m.user_id, m.name || m.email]));
}

/** Show a failed call as a toast (the server's error in words). */
export function useFail() {
  const t = useT();
  return (e: unknown) =>
    toast(e instanceof ApiError ? errorText(t, e.code, e.message) : String(e), "error");
}
