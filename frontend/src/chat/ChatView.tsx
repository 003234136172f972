// A conversation: the scrolling message list (opens at the newest message, keeps the reading
// position while older pages load), the fixed composer, and every action on the tree.
import { useQueryClient } from "@tanstack/react-query";
import { useCallback, useEffect, useLayoutEffect, useRef, useState, useSyncExternalStore } from "react";
import { useNavigate } from "react-router";
import { ApiError } from "../api/client";
import { api } from "../api/endpoints";
import type { Conversation, Message } from "../api/types";
import { DEFAULT_TITLES } from "./titles";
import { errorText, useT } from "../i18n";
import { refreshLists, watchTitle } from "../queries";
import { hub } from "../stream/hub";
import { isTerminal, SendFailed } from "../stream/turn";
import { quoteFrom, replaceMessages } from "../tree/path";
import { toast } from "../ui/toast";
import { Announcer } from "./Announcer";
import { Composer } from "./Composer";
import { MessageItem, type MessageActions } from "./MessageItem";
import { threadsChanged, type ThreadRef } from "./threads";
import { useThread } from "./useThread";

const drafts = new Map<string, string>();

function describe(e: unknown, t: ReturnType<typeof useT>): string {
  const err = e instanceof SendFailed ? e.error : e;
  if (err instanceof ApiError) return errorText(t, err.code, err.message);
  return errorText(t, "unknown", String(err));
}

export interface ChatViewProps {
  /** The conversation; undefined for a new chat (created on the first send). */
  cid?: string;
  /** Creates the conversation for a new chat. */
  create?: () => Promise<string>;
  /** After a new chat was created and its turn started. */
  onCreated?: (cid: string) => void;
  model?: string;
  /** A message to show in context (from search). */
  target?: string | null;
  onThread?: (thread: ThreadRef) => void;
  /** The conversation's inline threads by anchor message, and the one open beside it. */
  threads?: Map<string, Conversation[]>;
  openThread?: string | null;
  composerId?: string;
  empty?: React.ReactNode;
  /** user id → name, in a shared workspace conversation (shown beside each question). */
  authors?: Record<string, string>;
  /** Shown above the first message (a companion's opening message). */
  lead?: React.ReactNode;
}

export function ChatView({
  cid,
  create,
  onCreated,
  model,
  target,
  onThread,
  threads,
  openThread,
  composerId,
  empty,
  authors,
  lead,
}: ChatViewProps) {
  const t = useT();
  const qc = useQueryClient();
  const navigate = useNavigate();
  const thread = useThread(cid);
  const { items, setItems, refresh, reload, loadOlder, reveal, cursor, loadingOlder } = thread;
  useSyncExternalStore(hub.subscribe, hub.getVersion);
  const key = cid ?? "new";
  const [draft, setDraftState] = useState(() => drafts.get(key) ?? "");
  const [sendError, setSendError] = useState("");
  const [sending, setSending] = useState(false);
  const [highlight, setHighlight] = useState<string | null>(null);
  const [selection, setSelection] = useState<{ m: Message; quote: string; x: number; y: number } | null>(null);
  const list = useRef<HTMLDivElement>(null);
  const stick = useRef(true);
  const anchor = useRef<{ height: number; top: number; count: number } | null>(null);
  const scrollTarget = useRef<string | null>(null);
  const [atBottom, setAtBottom] = useState(true);

  const setDraft = (v: string) => {
    drafts.set(key, v);
    setDraftState(v);
  };
  useEffect(() => {
    setDraftState(drafts.get(key) ?? "");
    setSendError("");
    stick.current = true;
    setAtBottom(true);
  }, [key]);

  // follow every answer of this path that is still being written
  useEffect(() => {
    if (!cid) return;
    for (const m of items) if (m.status === "streaming") hub.follow(cid, m.id);
  }, [cid, items]);

  // when an answer here ends: the final rows, the list, and the generated title
  useEffect(
    () =>
      hub.onEnded((s) => {
        if (s.conversationId !== cid) return;
        refresh().then(() => s.messageId && hub.release(s.messageId));
        refreshLists(qc, cid);
        if (cid) watchTitle(qc, cid, DEFAULT_TITLES);
      }),
    [cid, refresh, qc],
  );

  const active = cid ? hub.activeIn(cid) : [];
  const streamingRows = items.filter((m) => {
    if (m.status !== "streaming") return false;
    const live = hub.forMessage(m.id);
    return !live || !isTerminal(live.state.phase);
  });
  const running = active.length > 0 || streamingRows.length > 0;
  const liveMsg = streamingRows[streamingRows.length - 1];
  const liveState = liveMsg ? hub.forMessage(liveMsg.id)?.state : undefined;

  // keep the newest message in view while the user is at the bottom
  useLayoutEffect(() => {
    const el = list.current;
    if (!el) return;
    const goal = scrollTarget.current && document.getElementById(`m-${scrollTarget.current}`);
    if (goal) {
      scrollTarget.current = null;
      stick.current = false;
      goal.scrollIntoView({ block: "center" });
    } else if (anchor.current) {
      // older messages went in above: keep what the reader sees where it was (only once they
      // are rendered; an assignment, so the browser's own scroll anchoring cannot add to it)
      if (items.length !== anchor.current.count) {
        el.scrollTop = anchor.current.top + (el.scrollHeight - anchor.current.height);
        anchor.current = null;
      }
    } else if (stick.current) {
      el.scrollTop = el.scrollHeight;
    }
  });

  const older = useCallback(async () => {
    const el = list.current;
    if (!el || loadingOlder || !cursor) return;
    anchor.current = { height: el.scrollHeight, top: el.scrollTop, count: items.length };
    try {
      if ((await loadOlder()).length === 0) anchor.current = null;
    } catch {
      anchor.current = null;
    }
  }, [cursor, loadOlder, loadingOlder, items.length]);

  const onScroll = () => {
    const el = list.current;
    if (!el) return;
    const bottom = el.scrollHeight - el.scrollTop - el.clientHeight < 80;
    stick.current = bottom;
    setAtBottom(bottom);
    if (el.scrollTop < 200) older();
  };

  // a short first page may not fill the screen: load older ones until it scrolls
  useEffect(() => {
    const el = list.current;
    if (el && cursor && !loadingOlder && el.scrollHeight <= el.clientHeight + 10) older();
  }, [items, cursor, loadingOlder, older]);

  // open a message from search in context
  useEffect(() => {
    if (!target || thread.state !== "ready") return;
    let cancelled = false;
    stick.current = false;
    reveal(target).then((found) => {
      if (cancelled || !found) return;
      scrollTarget.current = target; // scrolled to by the layout effect once it is rendered
      setHighlight(target);
      setTimeout(() => setHighlight(null), 4000);
    });
    return () => {
      cancelled = true;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [target, thread.state === "ready"]);

  const startTurn = async (conv: string, kind: "send" | "regenerate", body: Record<string, unknown>) => {
    const turn = hub.start(conv, kind, { ...body, ...(model ? { model } : {}) });
    turn.done.catch(() => undefined);
    await turn.started;
    return turn;
  };

  const send = async () => {
    const text = draft.trim();
    if (!text || sending) return;
    setSending(true);
    setSendError("");
    let conv = cid;
    try {
      if (!conv) {
        if (!create) return;
        conv = await create();
      }
      await startTurn(conv, "send", { content: text });
      drafts.delete(key);
      setDraftState("");
      stick.current = true;
      if (!cid) {
        refreshLists(qc);
        onCreated?.(conv);
      } else {
        await refresh();
        refreshLists(qc, cid);
      }
    } catch (e) {
      setSendError(describe(e, t)); // the text stays in the box
      if (!cid && conv) api.deleteConversation(conv).catch(() => undefined);
    } finally {
      setSending(false);
    }
  };

  const stop = async () => {
    if (!cid) return;
    const ids = new Set<string>(streamingRows.map((m) => m.id));
    for (const a of active) if (a.state.messageId) ids.add(a.state.messageId);
    try {
      if (ids.size === 0) await api.stop(cid);
      for (const id of ids) await api.stop(cid, id);
    } catch (e) {
      toast(describe(e, t), "error");
    }
  };

  const fail = (e: unknown) => toast(describe(e, t), "error");
  const actions: MessageActions = {
    regenerate: async (m) => {
      if (!cid) return;
      try {
        stick.current = true;
        await startTurn(cid, "regenerate", { message_id: m.id });
        await reload();
      } catch (e) {
        fail(e);
      }
    },
    switchTo: async (id) => {
      if (!cid) return;
      try {
        await api.switchLeaf(cid, id);
        await reload();
      } catch (e) {
        fail(e);
      }
    },
    save: async (m, text) => {
      if (!cid) return false;
      try {
        const row = await api.editMessage(cid, m.id, text);
        setItems(replaceMessages(items, [row]));
        return true;
      } catch (e) {
        fail(e);
        return false;
      }
    },
    resend: async (m, text) => {
      if (!cid) return false;
      try {
        stick.current = true;
        await startTurn(cid, "send", { content: text, parent_id: m.parent_id, branch: true });
        await reload();
        return true;
      } catch (e) {
        fail(e);
        return false;
      }
    },
    fork: async (m) => {
      if (!cid) return;
      try {
        const c = await api.fork(cid, { message_id: m.id });
        refreshLists(qc);
        navigate(`/c/${c.id}`);
      } catch (e) {
        fail(e);
      }
    },
    remove: async (m) => {
      if (!cid) return;
      try {
        await api.deleteRound(cid, m.id);
        await reload();
        refreshLists(qc, cid);
      } catch (e) {
        fail(e);
      }
    },
    thread: !onThread
      ? undefined
      : async (m, quote) => {
      if (!cid) return;
      const q = quoteFrom(quote);
      if (!q) return;
      try {
        const c = await api.createThread(cid, { message_id: m.id, quote: q });
        threadsChanged(qc, cid);
        onThread({ id: c.id, quote: q });
      } catch (e) {
        fail(e);
      }
      setSelection(null);
      window.getSelection()?.removeAllRanges();
    },
    openThread: onThread && ((c) => onThread({ id: c.id, quote: c.inline_quote })),
  };

  // a text selection inside an answer offers "Ask about this"
  const onMouseUp = () => {
    if (!onThread) return;
    setTimeout(() => {
      const sel = window.getSelection();
      const text = sel && !sel.isCollapsed ? sel.toString() : "";
      if (!sel || !text.trim() || !sel.rangeCount) {
        setSelection(null);
        return;
      }
      const range = sel.getRangeAt(0);
      const node = range.commonAncestorContainer;
      const el = (node.nodeType === 1 ? (node as Element) : node.parentElement)?.closest(".msg.assistant .msg-body");
      const li = el?.closest<HTMLElement>(".msg");
      const m = li ? items.find((x) => x.id === li.dataset.id) : undefined;
      const box = list.current?.getBoundingClientRect();
      if (!m || !box) {
        setSelection(null);
        return;
      }
      const r = range.getBoundingClientRect();
      setSelection({
        m,
        quote: text,
        x: Math.max(8, Math.min(r.left - box.left + r.width / 2, box.width - 140)),
        y: r.top - box.top + (list.current?.scrollTop ?? 0) - 44,
      });
    }, 0);
  };

  const busyPath = running;
  return (
    <div className="chat">
      <div className="messages" ref={list} onScroll={onScroll} onMouseUp={onMouseUp} tabIndex={-1}>
        {thread.state === "notfound" && <p className="center muted">{t("conversationNotFound")}</p>}
        {thread.state === "error" && (
          <div className="center" role="alert">
            <p>{t("serverUnreachable")}</p>
            <button type="button" onClick={() => refresh()}>
              {t("retry")}
            </button>
          </div>
        )}
        {cursor && (
          <p className="muted small older-slot" aria-live="polite">
            {loadingOlder ? t("loadingOlder") : ""}
          </p>
        )}
        {thread.state === "ready" && items.length === 0 && !running && (empty ?? null)}
        {thread.state === "ready" && !cursor && lead}
        <ol className="message-list" aria-label={t("messages")}>
          {items.map((m) => (
            <MessageItem
              key={m.id}
              m={m}
              live={hub.forMessage(m.id)?.state}
              busy={busyPath}
              highlighted={highlight === m.id}
              actions={actions}
              author={authors && m.author_id ? authors[m.author_id] : undefined}
              threads={threads?.get(m.id)}
              openThread={openThread}
            />
          ))}
        </ol>
        {selection && (
          <button
            type="button"
            className="ask-selection"
            style={{ left: selection.x, top: selection.y }}
            onMouseDown={(e) => e.preventDefault()}
            onClick={() => actions.thread?.(selection.m, selection.quote)}
          >
            {t("askAboutSelection")}
          </button>
        )}
      </div>
      {!atBottom && items.length > 0 && (
        <button
          type="button"
          className="jump-latest"
          onClick={() => {
            stick.current = true;
            setAtBottom(true);
            const el = list.current;
            if (el) el.scrollTop = el.scrollHeight;
          }}
        >
          ↓ {t("jumpToLatest")}
        </button>
      )}
      <Announcer text={liveState?.text ?? ""} active={!!liveMsg} messageId={liveMsg?.id ?? null} />
      <Composer
        id={composerId}
        value={draft}
        onChange={setDraft}
        onSend={send}
        onStop={stop}
        running={running}
        sending={sending}
        error={sendError}
        onDismissError={() => setSendError("")}
        autoFocus={!cid}
      />
    </div>
  );
}
