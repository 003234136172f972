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
