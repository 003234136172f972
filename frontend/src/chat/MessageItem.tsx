// One message of the active path: its text (Markdown for answers), thinking, state, branch
// arrows and actions. Editing happens in place in an editor, not a prompt().
import { useEffect, useRef, useState } from "react";
import type { Conversation, Message } from "../api/types";
import { errorText, useT } from "../i18n";
import { displayOf } from "../stream/display";
import type { TurnState } from "../stream/turn";
import { branchNav } from "../tree/path";
import { ConfirmDialog } from "../ui/Dialog";
import { Icon } from "../ui/Icon";
import { MenuButton, type MenuItem } from "../ui/Menu";
import { toast } from "../ui/toast";
import { AnswerExtras } from "../context/AnswerExtras";
import { copyText } from "./copy";
import { Markdown } from "./Markdown";
import { markQuotes } from "./quoteMark";
import { shortQuote } from "./threads";

export interface MessageActions {
  regenerate: (m: Message) => void;
  switchTo: (siblingId: string) => void;
  save: (m: Message, text: string) => Promise<boolean>;
  resend: (m: Message, text: string) => Promise<boolean>;
  fork: (m: Message) => void;
  remove: (m: Message) => void;
  /** Absent inside a thread (threads do not nest). */
  thread?: (m: Message, quote: string) => void;
  /** Open an existing inline thread in the side panel. */
  openThread?: (c: Conversation) => void;
}

/** The inline threads anchored to an answer: one opens at a click, several from a menu. */
function ThreadsButton({
  threads,
  open,
  onOpen,
}: {
  threads: Conversation[];
  open?: string | null;
  onOpen: (c: Conversation) => void;
}) {
  const t = useT();
  const label = threads.length === 1 ? t("threadsOne") : t("threadsMany", { n: threads.length });
  const isOpen = threads.some((c) => c.id === open);
  const face = (
    <>
      <Icon name="thread" />
      <span>{label}</span>
    </>
  );
  if (threads.length === 1) {
    const c = threads[0];
    return (
      <button
        type="button"
        className={`act threads threads-btn ${isOpen ? "open" : ""}`}
        title={c.inline_quote}
        onClick={() => onOpen(c)}
      >
        {face}
      </button>
    );
  }
  return (
    <MenuButton
      label={label}
      className="msg-menu threads threads-menu"
      buttonClass={`act threads-btn ${isOpen ? "open" : ""}`}
      items={threads.map((c) => ({
        id: c.id,
        label: shortQuote(c.inline_quote),
        title: c.inline_quote,
        onSelect: () => onOpen(c),
      }))}
    >
      {face}
    </MenuButton>
  );
}

function selectionIn(el: HTMLElement | null): string {
  const sel = window.getSelection();
  if (!el || !sel || sel.isCollapsed || !sel.rangeCount) return "";
  const r = sel.getRangeAt(0);
  return el.contains(r.commonAncestorContainer) ? sel.toString() : "";
}

export function MessageItem({
  m,
  live,
  busy,
  highlighted,
  actions,
  author,
  threads,
  openThread,
}: {
  m: Message;
  live?: TurnState;
  busy: boolean;
  highlighted: boolean;
  actions: MessageActions;
  /** Who said it (or asked for the answer), in a shared workspace conversation. */
  author?: string;
  /** The inline threads anchored to this message. */
  threads?: Conversation[];
  /** The id of the thread open in the side panel. */
  openThread?: string | null;
}) {
  const t = useT();
  const d = displayOf(m, live);
  const nav = branchNav(m);
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState("");
  const [confirmDelete, setConfirmDelete] = useState(false);
  const [showContext, setShowContext] = useState(false);
  const body = useRef<HTMLDivElement>(null);
  const editor = useRef<HTMLTextAreaElement>(null);
  const streaming = ["connecting", "streaming", "reconnecting"].includes(d.phase) && m.status === "streaming";
  const role = m.role === "user" ? t("you") : t("assistant");
  const more: MenuItem[] = [
    ...(m.role === "assistant" ? [{ label: t("editMessage"), onSelect: () => startEdit() }] : []),
    // an answer stopped before its first word has nothing to quote
    ...(m.role === "assistant" && actions.thread && d.text.trim()
      ? [
          {
            label: t("askAboutSelection"),
            onSelect: () => actions.thread?.(m, selectionIn(body.current) || d.text),
          },
        ]
      : []),
    ...(m.role === "assistant" && m.status !== "streaming"
      ? [{ label: t("ctxTitle"), onSelect: () => setShowContext(true) }]
      : []),
    { label: t("fork"), onSelect: () => actions.fork(m) },
    ...(busy ? [] : [{ label: t("deleteRound"), onSelect: () => setConfirmDelete(true), danger: true }]),
  ];

  useEffect(() => {
    if (editing) {
      const el = editor.current;
      el?.focus();
      el?.setSelectionRange(el.value.length, el.value.length);
    }
  }, [editing]);

  // the passages the threads quote are marked in the answer's text
  const quotes = (threads ?? []).map((c) => c.inline_quote);
  const quoteKey = JSON.stringify(quotes);
  useEffect(() => {
    const el = body.current;
    if (!el || editing || quotes.length === 0) return;
    return markQuotes(el, quotes);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [quoteKey, editing]);

  const startEdit = () => {
    setDraft(d.text);
    setEditing(true);
  };
  const finish = async (send: boolean) => {
    const text = draft.trim();
    // Ctrl+Enter as well as the Send button, which is disabled while an answer is being written
    if (!text || (send && busy)) return;
    const ok = send ? await actions.resend(m, text) : await actions.save(m, text);
    if (ok) setEditing(false);
  };

  return (
    <li
      className={`msg ${m.role} ${d.phase} ${highlighted ? "target" : ""}`}
      data-id={m.id}
      id={`m-${m.id}`}
      aria-label={role}
    >
      <div className="msg-role" aria-hidden="true">
        {m.role === "user" ? "" : "◆"}
      </div>
      <div className="msg-main">
        {author && m.role === "user" && <div className="msg-author muted small">{author}</div>}
        {d.thinking && (
          <details className="thinking" open={streaming && !d.text}>
            <summary>{t("thinking")}</summary>
            <div className="thinking-text">{d.thinking}</div>
          </details>
        )}
        {editing ? (
          <div className="editor">
            <textarea
              ref={editor}
              aria-label={t("editMessage")}
              value={draft}
              rows={Math.min(12, Math.max(3, draft.split("\n").length + 1))}
              onChange={(e) => setDraft(e.target.value)}
              onKeyDown={(e) => {
                if (e.key === "Escape") {
                  e.preventDefault();
                  e.stopPropagation();
                  setEditing(false);
                } else if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
                  e.preventDefault();
                  finish(m.role === "user");
                }
              }}
            />
            <div className="editor-actions">
              <button type="button" onClick={() => setEditing(false)}>
                {t("cancel")}
              </button>
              <button type="button" onClick={() => finish(false)} disabled={!draft.trim()}>
                {t("save")}
              </button>
              {m.role === "user" && (
                <button type="button" className="primary" onClick={() => finish(true)} disabled={!draft.trim() || busy}>
                  {t("saveAndSend")}
                </button>
              )}
            </div>
          </div>
        ) : (
          <div className="msg-body" ref={body}>
            {m.role === "assistant" ? (
              <Markdown text={d.text} />
            ) : (
              <div className="user-text">{d.text}</div>
            )}
            {streaming && !d.text && <span className="cursor" aria-hidden="true" />}
          </div>
        )}
        {d.phase !== "done" && m.role === "assistant" && (
          <div className={`msg-state state-${d.phase}`}>
            {d.phase === "connecting" || d.phase === "streaming" ? (
              <span className="pulse">{t("streaming")}</span>
            ) : d.phase === "reconnecting" ? (
              <span role="status">{t("reconnecting")}</span>
            ) : d.phase === "stopped" ? (
              <span>{t("stopped")}</span>
            ) : d.phase === "interrupted" ? (
              <span role="status">
                <strong>{t("interrupted")}:</strong> {errorText(t, "generation_interrupted")}
              </span>
            ) : (
              <span role="status">
                <strong>{t("failed")}:</strong> {errorText(t, d.error?.code || "error", d.error?.message)}
              </span>
            )}
          </div>
        )}
        {!editing && (
          <div className="msg-actions" role="toolbar" aria-label={role}>
            {threads && threads.length > 0 && actions.openThread && (
              <ThreadsButton threads={threads} open={openThread} onOpen={actions.openThread} />
            )}
            {nav && (
              <span className="branch-nav">
                <button
                  type="button"
                  className="icon-btn small branch-prev"
                  aria-label={t("previousBranch")}
                  disabled={!nav.prev || busy}
                  onClick={() => nav.prev && actions.switchTo(nav.prev)}
                >
                  ‹
                </button>
                <span className="branch-pos" aria-label={t("branchPosition", { n: nav.index + 1, m: nav.count })}>
                  {nav.label}
                </span>
                <button
                  type="button"
                  className="icon-btn small branch-next"
                  aria-label={t("nextBranch")}
                  disabled={!nav.next || busy}
                  onClick={() => nav.next && actions.switchTo(nav.next)}
                >
                  ›
                </button>
              </span>
            )}
            {d.text && (
              <button
                type="button"
                className="act"
                onClick={async () => {
                  if (await copyText(d.text)) toast(t("copied"));
                }}
                aria-label={t("copyMessage")}
              >
                {t("copy")}
              </button>
            )}
            {!streaming && m.role === "user" && (
              <button type="button" className="act" onClick={startEdit} aria-label={t("editMessage")}>
                {t("edit")}
              </button>
            )}
            {!streaming && m.role === "assistant" && (
              <button type="button" className="act" onClick={() => actions.regenerate(m)} disabled={busy}>
                {t("regenerate")}
              </button>
            )}
            {!streaming && m.role === "assistant" && (
              <AnswerExtras m={m} showContext={showContext} setShowContext={setShowContext} />
            )}
            {!streaming && (
              <MenuButton label={t("moreActions")} items={more} className="msg-menu">
                <span aria-hidden="true">⋯</span>
              </MenuButton>
            )}
          </div>
        )}
      </div>
      <ConfirmDialog
        open={confirmDelete}
        title={t("deleteRoundTitle")}
        body={t("deleteRoundBody")}
        confirm={t("deleteRound")}
        onClose={() => setConfirmDelete(false)}
        onConfirm={() => actions.remove(m)}
      />
    </li>
  );
}
