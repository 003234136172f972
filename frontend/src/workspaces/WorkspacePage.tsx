// /workspaces/{id}: a workspace's conversations (new shared or private chats), its members with
// their roles (the owner changes roles, admins remove members and invite by email or link) and
// leaving it.
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { Link, useNavigate, useParams } from "react-router";
import { useApp } from "../app/context";
import { TopBar } from "../chat/TopBar";
import { useT } from "../i18n";
import { toast } from "../ui/toast";
import { useFail, useMembers, wsApi, wsKeys, type Member, type Workspace } from "./api";

const RANK = { member: 0, admin: 1, owner: 2 } as const;

export function WorkspacePage() {
  const { workspaceId = "" } = useParams();
  const t = useT();
  const navigate = useNavigate();
  const fail = useFail();
  const ws = useQuery({ queryKey: [...wsKeys.all, workspaceId], queryFn: () => wsApi.get(workspaceId), retry: false });
  const convs = useQuery({ queryKey: wsKeys.conversations(workspaceId), queryFn: () => wsApi.conversations(workspaceId) });
  const name = ws.data?.name ?? (ws.isError ? t("err_not_found") : "");

  useEffect(() => {
    document.title = name ? `${name} · chatmem` : "chatmem";
  }, [name]);

  const start = async (shared: boolean) => {
    try {
      const c = await wsApi.createConversation(workspaceId, shared);
      navigate(`/c/${c.id}`);
    } catch (e) {
      fail(e);
    }
  };

  return (
    <div className="chat-page">
      <div className="chat-column ws-page">
        <TopBar title={name} />
        {ws.data && (
          <div className="ws-body">
            <section aria-labelledby="ws-chats-h" className="ws-section">
              <h2 id="ws-chats-h">{t("wsChats")}</h2>
              <div className="ws-row">
                <button type="button" className="primary" onClick={() => start(true)}>
                  + {t("wsNewShared")}
                </button>
                <button type="button" onClick={() => start(false)}>
                  + {t("wsNewPrivate")}
                </button>
              </div>
              <ul className="ws-conv-list">
                {(convs.data?.items ?? []).map((c) => (
                  <li key={c.id}>
                    <Link to={`/c/${c.id}`} className="conv-link">
                      <span className="conv-title">{c.title}</span>
                      {!c.is_public && <span className="muted small"> · {t("wsPrivate")}</span>}
                    </Link>
                  </li>
                ))}
              </ul>
              {convs.data && convs.data.items.length === 0 && <p className="muted">{t("wsNoChats")}</p>}
            </section>
            <Members ws={ws.data} />
          </div>
        )}
      </div>
    </div>
  );
}

function Members({ ws }: { ws: Workspace }) {
  const t = useT();
  const { me } = useApp();
  const qc = useQueryClient();
  const navigate = useNavigate();
  const fail = useFail();
  const members = useMembers(ws.id).data?.items ?? [];
  const mine = RANK[ws.role];
  // ["workspaces", …] holds the list, this workspace and its members: one prefix refetches all
  // three (invalidating the members first as well sent their request twice).
  const refresh = () => qc.invalidateQueries({ queryKey: wsKeys.all });
  const act = async (f: () => Promise<unknown>) => {
    try {
      await f();
      refresh();
    } catch (e) {
      fail(e);
    }
  };
  const label = (m: Member) => m.name || m.email;

  return (
    <section aria-labelledby="ws-members-h" className="ws-section">
      <h2 id="ws-members-h">{t("wsMembers")}</h2>
      <ul className="ws-members">
        {members.map((m) => (
          <li key={m.user_id} className="ws-member">
            <span className="conv-title">
              {label(m)}
              {m.user_id === me.id ? ` (${t("wsYou")})` : ""}
            </span>
            {ws.role === "owner" && m.role !== "owner" ? (
              <select
                aria-label={t("wsRoleOf", { name: label(m) })}
                value={m.role}
                onChange={(e) => act(() => wsApi.setRole(ws.id, m.user_id, e.target.value as "admin" | "member"))}
              >
                <option value="admin">{t("wsRole_admin")}</option>
                <option value="member">{t("wsRole_member")}</option>
              </select>
            ) : (
              <span className="muted small">{t(`wsRole_${m.role}`)}</span>
            )}
            {m.user_id !== me.id && m.role !== "owner" && mine > RANK[m.role] && (
              <button type="button" className="small danger" aria-label={t("wsRemoveName", { name: label(m) })} onClick={() => act(() => wsApi.remove(ws.id, m.user_id))}>
                {t("wsRemove")}
              </button>
            )}
          </li>
        ))}
      </ul>
      {mine >= RANK.admin && <Invite wid={ws.id} />}
      {ws.role !== "owner" && (
        <button
          type="button"
          className="danger"
          onClick={async () => {
            try {
              await wsApi.remove(ws.id, me.id);
              navigate("/");
              // Only the list of workspaces: the one just left (and its members) would answer
              // 404 now, so its own queries are left to expire rather than fetched again.
              qc.invalidateQueries({ queryKey: wsKeys.all, exact: true });
            } catch (e) {
              fail(e);
            }
          }}
        >
          {t("wsLeave")}
        </button>
      )}
    </section>
  );
}

function Invite({ wid }: { wid: string }) {
  const t = useT();
  const fail = useFail();
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<"admin" | "member">("member");
  const [link, setLink] = useState("");
  const send = async (withEmail: boolean) => {
    try {
      const inv = await wsApi.invite(wid, { role, ...(withEmail ? { email: email.trim() } : {}) });
      if (withEmail) {
        toast(t("wsInviteSent", { email: inv.email }));
        setEmail("");
      } else setLink(`${location.origin}/?join=${inv.token}`);
    } catch (e) {
      fail(e);
    }
  };
  return (
    <form
      className="ws-invite"
      onSubmit={(e) => {
        e.preventDefault();
        if (email.trim()) send(true);
      }}
    >
      <input type="email" aria-label={t("wsInviteEmail")} placeholder={t("wsInviteEmail")} value={email} onChange={(e) => setEmail(e.target.value)} />
      <select aria-label={t("wsRole")} value={role} onChange={(e) => setRole(e.target.value as "admin" | "member")}>
        <option value="member">{t("wsRole_member")}</option>
        <option value="admin">{t("wsRole_admin")}</option>
      </select>
      <button type="submit" className="primary">
        {t("wsInvite")}
      </button>
      <button type="button" onClick={() => send(false)}>
        {t("wsInviteLink")}
      </button>
      {link && (
        <p className="small ws-link">
          {t("wsLinkReady")} <code>{link}</code>
        </p>
      )}
    </form>
  );
}
