// Settings → Your data: "download all my data" (an export job, polled until its zip is ready)
// and deleting the account (the email typed again to confirm).
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { con, type DataExport } from "../api/console";
import { useApp } from "../app/context";
import { useT, type T } from "../i18n";
import type { MessageKey } from "../i18n/en";
import { Dialog } from "../ui/Dialog";
import { fail, when } from "./util";

const EXPORTS = ["me", "exports"];

function ExportRow({ x, t }: { x: DataExport; t: T }) {
  return (
    <li>
      <span>{when(x.created_at)}</span>
      <span className={`badge export-${x.status}`}>{t(`exportStatus_${x.status}` as MessageKey)}</span>
      {x.download_url && x.status === "done" && (
        <a href={x.download_url} download>
          {t("download")}
        </a>
      )}
      {x.error && <span className="form-error">{x.error}</span>}
    </li>
  );
}

export function DataSection() {
  const t = useT();
  const qc = useQueryClient();
  const [deleting, setDeleting] = useState(false);
  const list = useQuery({
    queryKey: EXPORTS,
    queryFn: () => con.exports(),
    refetchInterval: (q) =>
      q.state.data?.items.some((x) => x.status === "queued" || x.status === "running") ? 1000 : false,
  });
  const start = async () => {
    try {
      await con.startExport();
      qc.invalidateQueries({ queryKey: EXPORTS });
    } catch (e) {
      fail(t, e);
    }
  };
  return (
    <section aria-labelledby="data-h">
      <h2 id="data-h">{t("yourData")}</h2>
      <p className="muted">{t("exportHelp")}</p>
      <button type="button" onClick={start}>
        {t("exportStart")}
      </button>
      <ul className="export-list">
        {(list.data?.items ?? []).slice(0, 5).map((x) => (
          <ExportRow key={x.id} x={x} t={t} />
        ))}
      </ul>
      <h3>{t("deleteAccount")}</h3>
      <p className="muted">{t("deleteAccountHelp")}</p>
      <button type="button" className="danger" onClick={() => setDeleting(true)}>
        {t("deleteAccount")}
      </button>
      <DeleteAccountDialog open={deleting} onClose={() => setDeleting(false)} />
    </section>
  );
}

function DeleteAccountDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  const t = useT();
  const { me } = useApp();
  const [typed, setTyped] = useState("");
  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    try {
      await con.deleteAccount(typed.trim());
      window.location.assign("/login");
    } catch (err) {
      fail(t, err);
    }
  };
  return (
    <Dialog open={open} onClose={onClose} title={t("deleteAccount")} className="confirm">
      <form className="stack-form" onSubmit={submit}>
        <p>{t("deleteAccountHelp")}</p>
        <label>
          <span>{t("deleteAccountConfirm", { email: me.email })}</span>
          <input data-autofocus value={typed} autoComplete="off" onChange={(e) => setTyped(e.target.value)} />
        </label>
        <div className="dialog-actions">
          <button type="button" onClick={onClose}>
            {t("cancel")}
          </button>
          <button type="submit" className="danger" disabled={typed.trim().toLowerCase() !== me.email}>
            {t("deleteForever")}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
