// The conversation's own tools in its top bar: the next turn's context preview (and, later,
// sharing). A separate file so the chat screen itself stays small.
import { useState } from "react";
import { ContextPanel } from "../context/ContextPanel";
import { useT } from "../i18n";
import { ShareDialog } from "../share/ShareDialog";

export function ChatTools({ cid }: { cid: string }) {
  const t = useT();
  const [preview, setPreview] = useState(false);
  const [sharing, setSharing] = useState(false);
  return (
    <>
      <button type="button" className="icon-btn" aria-label={t("ctxNextTitle")} title={t("ctxNextTitle")} onClick={() => setPreview(true)}>
        <span aria-hidden="true">◔</span>
      </button>
      <button type="button" className="icon-btn" aria-label={t("shareTitle")} title={t("shareTitle")} onClick={() => setSharing(true)}>
        <span aria-hidden="true">⤴</span>
      </button>
      {sharing && <ShareDialog cid={cid} onClose={() => setSharing(false)} />}
      {preview && <ContextPanel open cid={cid} onClose={() => setPreview(false)} />}
    </>
  );
}
