// The message box: Enter sends, Shift+Enter adds a line (an IME composition is never sent),
// Escape stops a running answer. A refused send keeps the text and shows why, inline.
import { useEffect, useRef } from "react";
import { useT } from "../i18n";

export function Composer({
  value,
  onChange,
  onSend,
  onStop,
  running,
  sending,
  error,
  onDismissError,
  id = "composer-input",
  autoFocus = false,
}: {
  value: string;
  onChange: (v: string) => void;
  onSend: () => void;
  onStop: () => void;
  running: boolean;
  sending: boolean;
  error: string;
  onDismissError: () => void;
  id?: string;
  autoFocus?: boolean;
}) {
  const t = useT();
  const ta = useRef<HTMLTextAreaElement>(null);

  // grow with the text up to a third of the screen
  useEffect(() => {
    const el = ta.current;
    if (!el) return;
    el.style.height = "auto";
    el.style.height = `${Math.min(el.scrollHeight, Math.round(window.innerHeight / 3))}px`;
  }, [value]);

  useEffect(() => {
    if (autoFocus) ta.current?.focus();
  }, [autoFocus]);

  const canSend = !!value.trim() && !running && !sending;
  return (
    <form
      className="composer"
      onSubmit={(e) => {
        e.preventDefault();
        if (canSend) onSend();
      }}
    >
      {error && (
        <div className="composer-error" role="alert">
          <span>{error}</span>
          <button type="button" className="icon-btn small" aria-label={t("dismiss")} onClick={onDismissError}>
            ×
          </button>
        </div>
      )}
      <div className="composer-box">
        <textarea
          ref={ta}
          id={id}
          rows={1}
          value={value}
          aria-label={t("messagePlaceholder")}
          placeholder={t("messagePlaceholder")}
          readOnly={sending}
          onChange={(e) => onChange(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) {
              e.preventDefault();
              if (canSend) onSend();
            } else if (e.key === "Escape" && running) {
              e.preventDefault();
              onStop();
            }
          }}
        />
        {running ? (
          <button type="button" className="send stop" onClick={onStop} aria-label={t("stop")} aria-keyshortcuts="Escape">
            <span aria-hidden="true">■</span>
            <span className="label">{t("stop")}</span>
          </button>
        ) : (
          <button type="submit" className="send" disabled={!canSend} aria-label={t("send")} aria-keyshortcuts="Enter">
            <span aria-hidden="true">↑</span>
            <span className="label">{t("send")}</span>
          </button>
        )}
      </div>
      <p className="composer-hint muted">{t("emptyChatHint")}</p>
    </form>
  );
}
