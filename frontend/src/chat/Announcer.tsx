// Streaming text for screen readers: finished sentences are read out politely as they arrive
// (not every token), then "answer complete".
import { useEffect, useRef, useState } from "react";
import { useT } from "../i18n";

const SENTENCE_END = /[.!?。！？\n][^.!?。！？\n]*$/;

/** The part of `text` after `from` that ends at a sentence boundary ("" if none yet). */
export function completedSentences(text: string, from: number): string {
  const rest = text.slice(from);
  const m = rest.match(SENTENCE_END);
  if (!m || m.index === undefined) return "";
  return rest.slice(0, m.index + 1);
}

export function Announcer({ text, active, messageId }: { text: string; active: boolean; messageId: string | null }) {
  const t = useT();
  const [said, setSaid] = useState("");
  const pos = useRef(0);
  const wasActive = useRef(false);
  const latest = useRef(text);
  latest.current = text;

  useEffect(() => {
    pos.current = 0;
  }, [messageId]);

  useEffect(() => {
    if (active) {
      wasActive.current = true;
      const id = setInterval(() => {
        const chunk = completedSentences(latest.current, pos.current);
        if (chunk.trim()) {
          pos.current += chunk.length;
          setSaid(chunk.trim());
        }
      }, 1500);
      return () => clearInterval(id);
    }
    if (wasActive.current) {
      wasActive.current = false;
      const rest = latest.current.slice(pos.current).trim();
      pos.current = latest.current.length;
      setSaid(`${rest} ${t("answerDone")}`.trim());
    }
  }, [active, t]);

  return (
    <div className="sr-only" aria-live="polite" aria-atomic="true">
      {said}
    </div>
  );
}
