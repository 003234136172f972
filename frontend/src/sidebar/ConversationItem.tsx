// One conversation in a list: a link to /c/{id} and a menu of its actions (rename, pin, star,
// move to a project, archive, delete — the last after a confirmation).
import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { NavLink, useNavigate, useParams } from "react-router";
import { ApiError } from "../api/client";
import { api } from "../api/endpoints";
import type { Conversation, Project } from "../api/types";
import { errorText, useT } from "../i18n";
import { conversationChanged, refreshLists } from "../queries";
import { ConfirmDialog, Dialog, FormActions } from "../ui/Dialog";
import { MenuButton, type MenuItem } from "../ui/Menu";
import { toast } from "../ui/toast";
import { Icon } from "../ui/Icon";

export function ConversationItem({ c, projects }: { c: Conversation; projects: Project[] }) {
  const t = useT();
  const qc = useQueryClient();
  const navigate = useNavigate();
  const { conversationId } = useParams();
  const [renaming, setRenaming] = useState(false);
  const [moving, setMoving] = useState(false);
  const [deleting, setDeleting] = useState(false);
  const [title, setTitle] = useState(c.title);

  const patch = async (body: Parameters<typeof api.patchConversation>[1]) => {
    try {
      conversationChanged(qc, await api.patchConversation(c.id, body));
    } catch (e) {
      toast(e instanceof ApiError ? errorText(t, e.code, e.message) : String(e), "error");
    }
  };

  const items: MenuItem[] = [
    { label: t("rename"), onSelect: () => { setTitle(c.title); setRenaming(true); } },
    { label: c.pinned ? t("unpin") : t("pin"), onSelect: () => patch({ pinned: !c.pinned }) },
    { label: c.starred ? t("unstar") : t("star"), onSelect: () => patch({ starred: !c.starred }) },
    { label: t("moveToProject"), onSelect: () => setMoving(true) },
    {
      label: c.archived ? t("unarchive") : t("archiveChat"),
      onSelect: () => patch({ archived: !c.archived }),
    },
    { label: t("delete"), onSelect: () => setDeleting(true), danger: true },
  ];

  return (
    <li className={`conv-item ${conversationId === c.id ? "active" : ""}`} data-id={c.id}>
      <NavLink to={`/c/${c.id}`} className="conv-link" title={c.title}>
        {c.pinned && <span className="badge" aria-label={t("pinned")} title={t("pinned")}><Icon name="pin" /></span>}
        {c.starred && <span className="badge" aria-label={t("starred")} title={t("starred")}>★</span>}
        <span className="conv-title">{c.title}</span>
      </NavLink>
      <MenuButton label={t("conversationActions", { title: c.title })} items={items} className="conv-menu">
        <span aria-hidden="true">⋯</span>
      </MenuButton>
      <Dialog open={renaming} onClose={() => setRenaming(false)} title={t("rename")}>
        <form
          className="stack-form"
          onSubmit={(e) => {
            e.preventDefault();
            if (title.trim()) patch({ title: title.trim() });
            setRenaming(false);
          }}
        >
          <label>
            <span>{t("rename")}</span>
            <input value={title} maxLength={200} data-autofocus onChange={(e) => setTitle(e.target.value)} />
          </label>
          <FormActions onCancel={() => setRenaming(false)} />
        </form>
      </Dialog>
      <Dialog open={moving} onClose={() => setMoving(false)} title={t("moveToProject")}>
        <ul className="choice-list">
          <li>
            <button
              type="button"
              aria-pressed={!c.project_id}
              onClick={() => {
                patch({ project_id: null });
                setMoving(false);
              }}
            >
              {t("noProject")}
            </button>
          </li>
          {projects.map((p) => (
            <li key={p.id}>
              <button
                type="button"
                aria-pressed={c.project_id === p.id}
                onClick={() => {
                  patch({ project_id: p.id });
                  setMoving(false);
                }}
              >
                {p.emoji ? `${p.emoji} ` : ""}
                {p.name}
              </button>
            </li>
          ))}
        </ul>
      </Dialog>
      <ConfirmDialog
        open={deleting}
        title={t("deleteChatTitle")}
        body={t("deleteChatBody", { title: c.title })}
        confirm={t("delete")}
        onClose={() => setDeleting(false)}
        onConfirm={async () => {
          try {
            await api.deleteConversation(c.id);
            refreshLists(qc);
            if (conversationId === c.id) navigate("/");
          } catch (e) {
            toast(e instanceof ApiError ? errorText(t, e.code, e.message) : String(e), "error");
          }
        }}
      />
    </li>
  );
}
