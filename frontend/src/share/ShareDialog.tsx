// The share dialog: says exactly what a link publishes, then creates it, copies it, makes a new
// one (the old link stops working) or revokes it.
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { ApiError } from "../api/client";
import { lib, type Share } from "../api/library";
import { useApp } from "../app/context";
import { copyText } from "../chat/copy";
import { errorText, useT } from "../i18n";
import { Dialog } from "../ui/Dialog";
import { toast } from "../ui/toast";

export function shareUrl(s: Share): string {
  return `${location.origin}/share/${s.token}`;
}

export function ShareDialog({ cid, onClose }: { cid: string; onClose: () => void }) {
  const t = useT();
  const { me } = useApp();
  const qc = useQueryClient();
  const [busy, setBusy] = useState(false);
  const q = useQuery({
    queryKey: ["share", cid],
    queryFn: () => lib.share(cid).catch((e) => (e instanceof ApiError && e.status === 404 ? null : Promise.reject(e))),
    retry: false,
  });
  const run = async (f: () => Promise<Share | null | void>) => {
    setBusy(true);
    try {
      const s = await f();
      qc.setQueryData(["share", cid], s ?? null);
    } catch (e) {
      toast(e instanceof ApiError ? errorText(t, e.code, e.message) : String(e), "error");
    }
    setBusy(false);
  };
  const s = q.data;
  return (
    <Dialog open onClose={onClose} title={t("shareTitle")} className="share-dialog">
      <p>{t("sharePublishes", { name: me.name })}</p>
      <ul className="small">
        <li>{t("shareNotPublished")}</li>
        <li>{t("shareSnapshot")}</li>
      </ul>
      {q.isPending && <p className="muted">…</p>}
      {s && (
        <div className="share-link">
          <label>
            <span>{t("shareLink")}</span>
            <input readOnly value={shareUrl(s)} onFocus={(e) => e.currentTarget.select()} />
          </label>
          <p className="muted small">{t("shareCount", { n: s.message_count })}</p>
        </div>
      )}
      <div className="dialog-actions">
        {!s && (
          <button type="button" className="primary" disabled={busy || q.isPending} onClick={() => run(() => lib.createShare(cid))}>
            {t("shareCreate")}
          </button>
        )}
        {s && (
          <>
            <button
              type="button"
              className="primary"
              onClick={async () => {
                if (await copyText(shareUrl(s))) toast(t("copied"));
              }}
            >
              {t("shareCopy")}
            </button>
            <button type="button" disabled={busy} onClick={() => run(() => lib.createShare(cid))}>
              {t("shareAgain")}
            </button>
            <button
              type="button"
              className="danger"
              disabled={busy}
              onClick={() =>
                run(async () => {
                  await lib.revokeShare(cid);
                  return null;
                })
              }
            >
              {t("shareRevoke")}
            </button>
          </>
        )}
      </div>
    </Dialog>
  );
}
