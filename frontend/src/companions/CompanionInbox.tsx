// /companions: the user's companions, the one with the newest message first, each with its last
// reply as a preview; open its chat, edit its persona, see its memories, or create a new one.
import { useQuery, useQueryClient, type QueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Link, useNavigate } from "react-router";
import { con, type Agent } from "../api/console";
import { TopBar } from "../chat/TopBar";
import { useT } from "../i18n";
import { when } from "../settings/util";
import { PersonaEditor } from "./PersonaEditor";

// not ["agents"]: the memory library caches the bare list under that key
export const AGENTS = ["companions"];

/** After a companion changed: this screen's caches and the library's list of companions. */
export function agentsChanged(qc: QueryClient): void {
  qc.invalidateQueries({ queryKey: AGENTS });
  qc.invalidateQueries({ queryKey: ["agents"] });
}

export function Avatar({ a }: { a: Pick<Agent, "name" | "image_key"> }) {
  // same-origin paths and data: images only (the app's CSP refuses other origins)
  const src = a.image_key && /^(\/[^/]|data:image\/)/.test(a.image_key) ? a.image_key : "";
  return src ? (
    <img className="avatar" src={src} alt="" />
  ) : (
    <span className="avatar" aria-hidden="true">
      {[...a.name][0]?.toUpperCase() ?? "?"}
    </span>
  );
}

function InboxItem({ a, onEdit }: { a: Agent; onEdit: () => void }) {
  const t = useT();
  return (
    <li className="inbox-item">
      <Link to={`/companions/${a.id}`} className="inbox-main">
        <Avatar a={a} />
        <span className="inbox-text">
          <span className="inbox-head">
            <strong>{a.name}</strong>
            {a.last_message_at && <span className="muted small">{when(a.last_message_at)}</span>}
          </span>
          {a.headline && <span className="muted small">{a.headline}</span>}
          <span className="inbox-preview">{a.last_assistant_message || a.opening_message || t("noMessagesYet")}</span>
        </span>
      </Link>
      <div className="inbox-actions">
        <button type="button" onClick={onEdit} aria-label={`${t("companionEdit")}: ${a.name}`}>
          {t("companionEdit")}
        </button>
        <Link to={`/memories?agent=${encodeURIComponent(a.id)}`} aria-label={`${t("companionMemories")}: ${a.name}`}>
          {t("companionMemories")}
        </Link>
      </div>
    </li>
  );
}

export function CompanionInbox() {
  const t = useT();
  const qc = useQueryClient();
  const navigate = useNavigate();
  const agents = useQuery({ queryKey: AGENTS, queryFn: con.agents });
  const [editing, setEditing] = useState<Agent | null | undefined>(undefined);
  const items = agents.data?.items ?? [];
  return (
    <div className="page">
      <TopBar title={t("companions")}>
        <button type="button" className="primary" onClick={() => setEditing(null)}>
          {t("newCompanion")}
        </button>
      </TopBar>
      <div className="page-body companions">
        {agents.isSuccess && items.length === 0 && <p className="muted">{t("companionsEmpty")}</p>}
        <ul className="inbox" aria-label={t("companions")}>
          {items.map((a) => (
            <InboxItem key={a.id} a={a} onEdit={() => setEditing(a)} />
          ))}
        </ul>
      </div>
      {editing !== undefined && (
        <PersonaEditor
          open
          agent={editing}
          onClose={() => setEditing(undefined)}
          onSaved={(a) => {
            agentsChanged(qc);
            setEditing(undefined);
            if (!editing) navigate(`/companions/${a.id}`);
          }}
        />
      )}
    </div>
  );
}
