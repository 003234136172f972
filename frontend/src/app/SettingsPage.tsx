// Settings: profile (name, language, theme), the password, API keys, the memory switch and the
// user's data (export, account deletion).
import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { ApiError } from "../api/client";
import { api } from "../api/endpoints";
import { errorText, LANGS, useT, type Lang } from "../i18n";
import { keys } from "../queries";
import { TopBar } from "../chat/TopBar";
import { ApiKeys } from "../settings/ApiKeys";
import { DataSection } from "../settings/DataSection";
import { MemorySection } from "../settings/MemorySection";
import type { ThemePref } from "../ui/prefs";
import { toast } from "../ui/toast";
import { useApp } from "./context";

export function SettingsPage() {
  const t = useT();
  const { me, prefs, setPrefs } = useApp();
  const qc = useQueryClient();
  const [name, setName] = useState(me.name);
  const [pwError, setPwError] = useState("");
  const [pwDone, setPwDone] = useState("");

  /** Save profile fields; `notify` for changes that are not visible by themselves. */
  const patch = async (body: Parameters<typeof api.patchMe>[0], notify = false) => {
    try {
      qc.setQueryData(keys.me, await api.patchMe(body));
      if (notify) toast(t("saved"));
    } catch (e) {
      toast(e instanceof ApiError ? errorText(t, e.code, e.message) : String(e), "error");
    }
  };

  const onPassword = async (e: React.FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = e.currentTarget;
    const f = new FormData(form);
    setPwError("");
    setPwDone("");
    if (f.get("new_password") !== f.get("repeat")) {
      setPwError(t("passwordsDiffer"));
      return;
    }
    try {
      await api.changePassword({
        current_password: String(f.get("current_password") || ""),
        new_password: String(f.get("new_password")),
      });
      form.reset();
      setPwDone(t("passwordChanged"));
      qc.invalidateQueries({ queryKey: keys.me });
    } catch (err) {
      setPwError(err instanceof ApiError ? err.message : String(err));
    }
  };

  return (
    <div className="page">
      <TopBar title={t("settingsTitle")} />
      <div className="page-body settings">
        <section aria-labelledby="profile-h">
          <h2 id="profile-h">{t("profile")}</h2>
          <form
            className="row-form"
            onSubmit={(e) => {
              e.preventDefault();
              if (name.trim()) patch({ name: name.trim() }, true);
            }}
          >
            <label>
              <span>{t("displayName")}</span>
              <input value={name} maxLength={120} onChange={(e) => setName(e.target.value)} />
            </label>
            <button type="submit">{t("save")}</button>
          </form>
          <p className="muted">{me.email}</p>
          <label className="field">
            <span>{t("language")}</span>
            <select
              value={prefs.lang ?? ""}
              onChange={(e) => {
                const lang = e.target.value as Lang;
                setPrefs({ lang });
                patch({ language: lang });
              }}
            >
              {!prefs.lang && <option value="">—</option>}
              {LANGS.map((l) => (
                <option key={l.id} value={l.id}>
                  {l.label}
                </option>
              ))}
            </select>
          </label>
          <fieldset className="field theme-choice">
            <legend>{t("theme")}</legend>
            {(["system", "light", "dark"] as ThemePref[]).map((th) => (
              <label key={th} className="radio">
                <input
                  type="radio"
                  name="theme"
                  value={th}
                  checked={prefs.theme === th}
                  onChange={() => {
                    setPrefs({ theme: th });
                    patch({ theme: th });
                  }}
                />
                {t(th === "system" ? "themeSystem" : th === "light" ? "themeLight" : "themeDark")}
              </label>
            ))}
          </fieldset>
        </section>
        <section aria-labelledby="pw-h">
          <h2 id="pw-h">{me.has_password ? t("changePassword") : t("setPassword")}</h2>
          {!me.has_password && <p className="notice">{t("noPasswordYet")}</p>}
          <form className="stack-form" onSubmit={onPassword}>
            {me.has_password && (
              <label>
                <span>{t("currentPassword")}</span>
                <input name="current_password" type="password" autoComplete="current-password" required />
              </label>
            )}
            <label>
              <span>{t("newPassword")}</span>
              <input name="new_password" type="password" autoComplete="new-password" minLength={8} required />
            </label>
            <label>
              <span>{t("repeatPassword")}</span>
              <input name="repeat" type="password" autoComplete="new-password" minLength={8} required />
            </label>
            {pwError && (
              <p className="form-error" role="alert">
                {pwError}
              </p>
            )}
            {pwDone && (
              <p className="form-ok" role="status">
                {pwDone}
              </p>
            )}
            <button type="submit" className="primary">
              {me.has_password ? t("changePassword") : t("setPassword")}
            </button>
          </form>
        </section>
        <ApiKeys />
        <MemorySection />
        <DataSection />
      </div>
    </div>
  );
}
