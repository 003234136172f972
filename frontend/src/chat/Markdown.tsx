// Rendered, sanitised Markdown with working copy buttons on code blocks (event delegation: the
// HTML carries no handlers). While an answer streams, rendering is throttled to animation frames.
import { useDeferredValue, useMemo } from "react";
import { useT } from "../i18n";
import { renderMarkdown } from "../markdown/render";
import { copyText } from "./copy";

export function Markdown({ text, className = "" }: { text: string; className?: string }) {
  const t = useT();
  const deferred = useDeferredValue(text);
  const html = useMemo(
    () => renderMarkdown(deferred, { copy: t("copy"), copyCode: t("copyCode") }),
    [deferred, t],
  );
  const onClick = async (e: React.MouseEvent<HTMLDivElement>) => {
    const btn = (e.target as HTMLElement).closest<HTMLButtonElement>("[data-copy-code]");
    if (!btn) return;
    const code = btn.closest(".code-block")?.querySelector("code")?.textContent ?? "";
    if (await copyText(code)) {
      btn.textContent = t("copied");
      setTimeout(() => (btn.textContent = t("copy")), 1500);
    }
  };
  return <div className={`md ${className}`} onClick={onClick} dangerouslySetInnerHTML={{ __html: html }} />;
}
