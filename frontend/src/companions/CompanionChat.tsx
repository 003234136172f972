// /companions/{id}: the companion's default conversation (seed 000's inbox chat), its opening
// message first, with its persona editor, its memories and deletion at hand.
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { Link, useNavigate, useParams } from "react-router";
import { agentConversation, con } from "../api/console";
import { ChatView } from "../chat/ChatView";
import { TopBar } from "../chat/TopBar";
import { useT } from "../i18n";
import { fail } from "../settings/util";
import { ConfirmDialog } from "../ui/Dialog";
import { AGENTS, agentsChanged, Avatar } from "./CompanionInbox";
import { PersonaEditor } from "./PersonaEditor";

export function CompanionChat() {
  const { agentId = "" } = useParams();
  const t = useT();
  const qc = useQueryClient();
  const navigate = useNavigate();
  const agent = useQuery({ queryKey: [...AGENTS, agentId], queryFn: () => con.agent(agentId) });
  const conv = useQuery({ queryKey: [...AGENTS, agentId, "conversation"], queryFn: () => agentConversation(agentId) });
  const [editing, setEditing] = useState(false);
  const [deleting, setDeleting] = useState(false);
  const a = agent.data;
  useEffect(() => {
    document.title = a ? `${a.name} · chatmem` : "chatmem";
  }, [a]);

  const remove = async () => {
    try {
      await con.deleteAgent(agentId);
      agentsChanged(qc);
      navigate("/companions");
    } catch (e) {
      fail(t, e);
    }
  };
  const opening = a?.opening_message;
  return (
    <div className="chat-page">
      <div className="chat-column">
        <TopBar title={a?.name ?? (agent.isError ? t("err_not_found") : "")}>
          {a && (
            <>
              <button type="button" onClick={() => setEditing(true)}>
                {t("companionEdit")}
              </button>
              <Link className="btn" to={`/memories?agent=${encodeURIComponent(a.id)}`}>
                {t("companionMemories")}
              </Link>
              <button type="button" className="danger" onClick={() => setDeleting(true)}>
                {t("companionDelete")}
              </button>
            </>
          )}
        </TopBar>
        {conv.data && (
          <ChatView
            key={conv.data.id}
            cid={conv.data.id}
            lead={
              opening && a ? (
                <div className="opening-message" aria-label={t("personaOpening")}>
                  <Avatar a={a} />
                  <p>{opening}</p>
                </div>
              ) : null
            }
          />
        )}
      </div>
      {a && editing && (
        <PersonaEditor
          open
          agent={a}
          onClose={() => setEditing(false)}
          onSaved={() => {
            agentsChanged(qc);
            setEditing(false);
          }}
        />
      )}
      <ConfirmDialog
        open={deleting}
        title={t("companionDelete")}
        body={t("companionDeleteBody", { name: a?.name ?? "" })}
        confirm={t("delete")}
        onConfirm={remove}
        onClose={() => setDeleting(false)}
      />
    </div>
  );
}
