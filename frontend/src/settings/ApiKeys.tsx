// Settings → API keys: create one (its secret is shown this once), list them, revoke one.
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { con, type ApiKey } from "../api/console";
import { useT } from "../i18n";
import { ConfirmDialog } from "../ui/Dialog";
import { toast } from "../ui/toast";
import { fail, when } from "./util";

const KEYS = ["me", "keys"];

export function ApiKeys() {
  const t = useT();
  const qc = useQueryClient();
  const list = useQuery({ queryKey: KEYS, queryFn: con.keys });
  const [name, setName] = useState("");
  const [secret, setSecret] = useState("");
  const [revoking, setRevoking] = useState<ApiKey | null>(null);

  const create = async (e: React.FormEvent) => {
    e.preventDefault();
    try {
      const made = await con.createKey(name.trim());
      setSecret(made.secret);
      setName("");
      qc.invalidateQueries({ queryKey: KEYS });
    } catch (err) {
      fail(t, err);
    }
  };
  const revoke = async (k: ApiKey) => {
    try {
      await con.revokeKey(k.id);
      qc.invalidateQueries({ queryKey: KEYS });
    } catch (err) {
      fail(t, err);
    }
  };
  const copy = async () => {
    await navigator.clipboard?.writeText(secret).catch(() => undefined);
    toast(t("copied"));
  };

  return (
    <section aria-labelledby="keys-h">
      <h2 id="keys-h">{t("apiKeys")}</h2>
      <p className="muted">{t("apiKeysHelp")}</p>
      <form className="row-form" onSubmit={create}>
        <label>
          <span>{t("keyName")}</span>
          <input value={name} maxLength={100} onChange={(e) => setName(e.target.value)} />
        </label>
        <button type="submit">{t("createKey")}</button>
      </form>
      {secret && (
        <div className="key-secret" role="status">
          <p>{t("keyCreated")}</p>
          <code className="secret">{secret}</code>
          <button type="button" onClick={copy}>
            {t("copyKey")}
          </button>
        </div>
      )}
      <ul className="key-list">
        {(list.data?.items ?? []).map((k) => (
          <li key={k.id} className={k.revoked_at ? "revoked" : ""}>
            <div className="key-main">
              <strong>{k.name || "—"}</strong>
              <span className="muted">
                {t("keyPrefix")} <code>{k.prefix}…</code> · {t("keyCreatedAt")} {when(k.created_at)} ·{" "}
                {t("keyLastUsed")} {k.last_used_at ? when(k.last_used_at) : t("keyNeverUsed")}
              </span>
            </div>
            {k.revoked_at ? (
              <span className="badge">{t("keyRevoked")}</span>
            ) : (
              <button type="button" className="danger" aria-label={`${t("revoke")} ${k.name}`} onClick={() => setRevoking(k)}>
                {t("revoke")}
              </button>
            )}
          </li>
        ))}
      </ul>
      <ConfirmDialog
        open={!!revoking}
        title={t("revokeKeyTitle")}
        body={t("revokeKeyBody", { name: revoking?.name || revoking?.prefix || "" })}
        confirm={t("revoke")}
        onConfirm={() => revoking && revoke(revoking)}
        onClose={() => setRevoking(null)}
      />
    </section>
  );
}
