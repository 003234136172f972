// An inline thread beside its conversation: the quoted passage and its own chat.
import { useEffect, useRef } from "react";
import { useT } from "../i18n";
import { ChatView } from "./ChatView";

export function ThreadPanel({
  id,
  quote,
  model,
  onClose,
}: {
  id: string;
  quote: string;
  model?: string;
  onClose: () => void;
}) {
  const t = useT();
  const panel = useRef<HTMLElement>(null);
  useEffect(() => {
    // closing hands the focus back to what opened the thread (the answer's menu button), or to
    // the conversation's composer when that is gone (the selection's button): never to <body>
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    return () => {
      const back = opener?.isConnected ? opener : document.getElementById("composer-input");
      setTimeout(() => back?.focus(), 0);
    };
  }, []);
  useEffect(() => {
    document.getElementById("thread-input")?.focus();
  }, [id]);
  return (
    <aside
      ref={panel}
      className="thread-panel"
      aria-label={t("threadTitle")}
      onKeyDown={(e) => {
        if (e.key === "Escape" && !e.defaultPrevented) {
          e.stopPropagation();
          onClose();
        }
      }}
    >
      <header className="thread-head">
        <h2>{t("threadTitle")}</h2>
        <button type="button" className="icon-btn" aria-label={t("closeThread")} onClick={onClose}>
          ×
        </button>
      </header>
      <blockquote className="thread-quote" aria-label={t("threadQuote")}>
        {quote}
      </blockquote>
      <ChatView cid={id} model={model} composerId="thread-input" />
    </aside>
  );
}
