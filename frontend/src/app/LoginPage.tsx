// The login page: email + password. A logged-in visitor goes straight on to where they meant to be.
import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Navigate, useNavigate, useSearchParams } from "react-router";
import { ApiError } from "../api/client";
import { api } from "../api/endpoints";
import { errorText, useT } from "../i18n";
import { keys, useMe } from "../queries";

function safeNext(next: string | null): string {
  // only paths of this app (no "//host" or "https://…" open redirect)
  return next && next.startsWith("/") && !next.startsWith("//") && !next.startsWith("/login") ? next : "/";
}

export function LoginPage() {
  const t = useT();
  const me = useMe();
  const qc = useQueryClient();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  const next = safeNext(params.get("next"));

  if (me.data) return <Navigate to={next} replace />;

  const onSubmit = async (e: React.FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    setBusy(true);
    setError("");
    try {
      const r = await api.login({ email: String(f.get("email")), password: String(f.get("password")) });
      qc.setQueryData(keys.me, r.user);
      await qc.invalidateQueries({ queryKey: keys.me });
      navigate(next, { replace: true });
    } catch (err) {
      const status = err instanceof ApiError ? err.status : 0;
      setError(status === 401 ? t("wrongLogin") : err instanceof ApiError ? errorText(t, err.code, err.message) : t("err_network_error"));
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="login-page">
      <form className="login-card" onSubmit={onSubmit} aria-labelledby="login-title">
        <div className="brand" aria-hidden="true">◆</div>
        <h1 id="login-title">{t("loginTitle")}</h1>
        <label>
          <span>{t("email")}</span>
          <input name="email" type="email" autoComplete="username" required autoFocus />
        </label>
        <label>
          <span>{t("password")}</span>
          <input name="password" type="password" autoComplete="current-password" required />
        </label>
        {error && (
          <p className="form-error" role="alert" id="login-error">
            {error}
          </p>
        )}
        <button type="submit" className="primary" disabled={busy}>
          {busy ? t("loggingIn") : t("logIn")}
        </button>
        <div className="hint">
          <p>{t("loginHelp")}</p>
          <code>chatmem users login-link --email you@example.com</code>
          <code>chatmem users set-password --email you@example.com</code>
        </div>
      </form>
    </div>
  );
}
