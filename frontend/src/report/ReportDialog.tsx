// "Report a problem": a description and, only if the user ticks it, a screenshot of the page
// taken in the browser (previewed before sending), sent to POST /api/user-feedback.
import { useEffect, useState } from "react";
import { useLocation } from "react-router";
import { errorFrom, writeHeaders } from "../api/client";
import { useT } from "../i18n";
import { fail } from "../settings/util";
import { Dialog } from "../ui/Dialog";
import { toast } from "../ui/toast";
import { captureViewport } from "./capture";

const DESCRIPTION_MAX = 5000;

async function send(form: FormData): Promise<void> {
  const headers = new Headers();
  writeHeaders("POST", headers);
  const res = await fetch("/api/user-feedback", { method: "POST", body: form, headers, credentials: "same-origin" });
  if (!res.ok) throw await errorFrom(res);
}

export function ReportDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  const t = useT();
  const location = useLocation();
  const [text, setText] = useState("");
  const [withShot, setWithShot] = useState(false);
  const [shot, setShot] = useState<{ blob: Blob; url: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const [shotError, setShotError] = useState(false);

  // the picture is taken when the dialog opens (so it shows the page, not the dialog) and kept
  // in memory; it is sent only if the box is ticked
  useEffect(() => {
    if (!open) return;
    let url = "";
    captureViewport()
      .then((blob) => {
        url = URL.createObjectURL(blob);
        setShot({ blob, url });
      })
      .catch(() => setShotError(true));
    return () => {
      if (url) URL.revokeObjectURL(url);
      setShot(null);
      setWithShot(false);
      setShotError(false);
    };
  }, [open]);

  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    setBusy(true);
    const f = new FormData();
    f.append("description", text.trim());
    f.append("page_path", location.pathname);
    const conv = location.pathname.match(/^\/c\/([^/]+)/);
    if (conv) f.append("conversation_id", conv[1]);
    f.append("viewport_width", String(window.innerWidth));
    f.append("viewport_height", String(window.innerHeight));
    if (withShot && shot) f.append("screenshot", shot.blob, "screenshot.png");
    try {
      await send(f);
      toast(t("reportSent"));
      setText("");
      onClose();
    } catch (err) {
      fail(t, err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <Dialog open={open} onClose={onClose} title={t("reportProblem")} className="report-dialog">
      <form className="stack-form" onSubmit={submit}>
        <label>
          <span>{t("reportDescription")}</span>
          <textarea data-autofocus rows={4} required maxLength={DESCRIPTION_MAX} value={text} onChange={(e) => setText(e.target.value)} />
        </label>
        <label className="radio">
          <input type="checkbox" checked={withShot} disabled={!shot} onChange={(e) => setWithShot(e.target.checked)} />
          {t("reportScreenshot")}
        </label>
        <p className="muted small">{shotError ? t("err_unknown", { message: "screenshot" }) : t("reportScreenshotHelp")}</p>
        {withShot && shot && <img className="report-preview" src={shot.url} alt={t("screenshot")} />}
        <button type="submit" className="primary" disabled={busy || !text.trim()}>
          {t("reportSend")}
        </button>
      </form>
    </Dialog>
  );
}
