// The sidebar's space switcher: personal space or one of the user's workspaces, a new workspace,
// and the invitations waiting for the user (accept / decline).
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { useNavigate, useParams, useSearchParams } from "react-router";
import { useT } from "../i18n";
import { useConversation } from "../queries";
import { useFail, useWorkspaces, wsApi, wsKeys } from "./api";

export function WorkspaceSwitcher() {
  const t = useT();
  const navigate = useNavigate();
  const qc = useQueryClient();
  const { workspaceId, conversationId } = useParams();
  // in a workspace's conversation the switcher shows that workspace
  const open = useConversation(workspaceId ? undefined : conversationId).data;
  const current = workspaceId ?? (open?.workspace_id || "");
  const spaces = useWorkspaces().data?.items ?? [];
  const invites = useQuery({ queryKey: wsKeys.invites, queryFn: wsApi.myInvites }).data?.items ?? [];
  const [adding, setAdding] = useState(false);
  const [name, setName] = useState("");
  const [params] = useSearchParams();
  const join = params.get("join");

  useEffect(() => {
    if (!join) return;
    wsApi
      .join(join)
      .then((ws) => {
        qc.invalidateQueries({ queryKey: wsKeys.all });
        navigate(`/workspaces/${ws.id}`, { replace: true });
      })
      .catch((e) => {
        fail(e);
        navigate("/", { replace: true });
      });
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [join]);

  const fail = useFail();
  const create = async () => {
    if (!name.trim()) return;
    try {
      const ws = await wsApi.create(name.trim());
      setName("");
      setAdding(false);
      await qc.invalidateQueries({ queryKey: wsKeys.all });
      navigate(`/workspaces/${ws.id}`);
    } catch (e) {
      fail(e);
    }
  };
  const answer = async (iid: string, yes: boolean) => {
    try {
      if (yes) {
        const ws = await wsApi.accept(iid);
        navigate(`/workspaces/${ws.id}`);
      } else await wsApi.decline(iid);
      qc.invalidateQueries({ queryKey: wsKeys.invites });
      qc.invalidateQueries({ queryKey: wsKeys.all });
    } catch (e) {
      fail(e);
    }
  };

  return (
    <div className="ws-switcher">
      <div className="ws-row">
        <label htmlFor="ws-select" className="muted small">
          {t("wsSpace")}
        </label>
        <select
          id="ws-select"
          value={current}
          onChange={(e) => navigate(e.target.value ? `/workspaces/${e.target.value}` : "/")}
        >
          <option value="">{t("wsPersonal")}</option>
          {spaces.map((w) => (
            <option key={w.id} value={w.id}>
              {w.name}
            </option>
          ))}
        </select>
        <button type="button" className="icon-btn small" aria-label={t("wsNew")} onClick={() => setAdding((v) => !v)}>
          +
        </button>
      </div>
      {adding && (
        <form
          className="ws-row"
          onSubmit={(e) => {
            e.preventDefault();
            create();
          }}
        >
          <input aria-label={t("wsName")} placeholder={t("wsName")} value={name} maxLength={200} onChange={(e) => setName(e.target.value)} autoFocus />
          <button type="submit" className="primary">
            {t("wsCreate")}
          </button>
        </form>
      )}
      {invites.length > 0 && (
        <ul className="ws-invites" aria-label={t("wsInvitations")}>
          {invites.map((i) => (
            <li key={i.id}>
              <span className="conv-title">{i.workspace_name}</span>
              <button type="button" className="small" onClick={() => answer(i.id, true)}>
                {t("wsAccept")}
              </button>
              <button type="button" className="small" onClick={() => answer(i.id, false)}>
                {t("wsDecline")}
              </button>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
