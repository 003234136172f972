// Calls of settings (API keys, data export, account deletion), companions and the admin
// console (part 3 of the app), typed by the generated OpenAPI schema.
import { http, unwrap } from "./client";
import type { Schemas } from "./types";

export type ApiKey = Schemas["KeyOut"];
export type DataExport = Schemas["ExportOut"];
export type Agent = Schemas["AgentOut"];
export type AgentIn = Schemas["AgentIn"];
export type AdminUser = Schemas["AdminUserOut"];
export type Usage = Schemas["AdminUsageOut"];
export type UsageRow = Schemas["UsageRow"];
export type Ratings = Schemas["RatingSummary"];
export type Report = Schemas["ReportOut"];
export type Job = Schemas["JobOut"];
export type JobStatus = Job["status"];

export const con = {
  keys: () => unwrap(http.GET("/api/me/keys")),
  createKey: (name: string) => unwrap(http.POST("/api/me/keys", { body: { name } })),
  revokeKey: (kid: string) =>
    unwrap(http.DELETE("/api/me/keys/{kid}", { params: { path: { kid } } })),

  exports: () => unwrap(http.GET("/api/exports")),
  startExport: () => unwrap(http.POST("/api/exports")),
  deleteAccount: (confirm: string) => unwrap(http.DELETE("/api/account", { body: { confirm } })),

  agents: () => unwrap(http.GET("/api/agents")),
  agent: (id: string) =>
    unwrap(http.GET("/api/agents/{obj_id}", { params: { path: { obj_id: id } } })),
  createAgent: (body: Schemas["AgentIn"]) => unwrap(http.POST("/api/agents", { body })),
  patchAgent: (id: string, body: Schemas["AgentPatch"]) =>
    unwrap(http.PATCH("/api/agents/{obj_id}", { params: { path: { obj_id: id } }, body })),
  deleteAgent: (id: string) =>
    unwrap(http.DELETE("/api/agents/{obj_id}", { params: { path: { obj_id: id } } })),

  users: () => unwrap(http.GET("/api/admin/users")),
  createUser: (body: Schemas["AdminUserIn"]) => unwrap(http.POST("/api/admin/users", { body })),
  patchUser: (uid: string, body: Schemas["AdminUserPatch"]) =>
    unwrap(http.PATCH("/api/admin/users/{uid}", { params: { path: { uid } }, body })),
  setPassword: (uid: string, password: string) =>
    unwrap(
      http.POST("/api/admin/users/{uid}/password", {
        params: { path: { uid } },
        body: { password },
      }),
    ),
  loginLink: (uid: string) =>
    unwrap(http.POST("/api/admin/users/{uid}/login-link", { params: { path: { uid } } })),
  usage: (days: number) => unwrap(http.GET("/api/admin/usage", { params: { query: { days } } })),
  ratings: (days: number) =>
    unwrap(http.GET("/api/admin/ratings", { params: { query: { days } } })),
  reports: () => unwrap(http.GET("/api/admin/user-feedback")),
  jobs: (status?: JobStatus) =>
    unwrap(http.GET("/api/admin/jobs", { params: { query: status ? { status } : {} } })),
  retryJob: (job_id: string) =>
    unwrap(http.POST("/api/admin/jobs/{job_id}/retry", { params: { path: { job_id } } })),
};

/** The agent's default conversation (the seed-000 inbox), created on first open. */
export async function agentConversation(agentId: string): Promise<{ id: string; opening: string | null }> {
  const { data } = await unwrap(
    http.GET("/rpc/chat/inbox/{agentId}/conversation", { params: { path: { agentId } } }),
  );
  return { id: data.conversationId, opening: data.openingMessage ?? null };
}
