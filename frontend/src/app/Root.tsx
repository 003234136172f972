// The root: preferences (theme, language) for every page, and the signed-in gate that sends a
// logged-out visitor to the login page (and back where they were after logging in).
import { useQueryClient } from "@tanstack/react-query";
import { useCallback, useEffect, useMemo, useState } from "react";
import { Navigate, Outlet, useLocation, useNavigate, useOutletContext } from "react-router";
import { onUnauthorized } from "../api/client";
import { api } from "../api/endpoints";
import { ApiError } from "../api/client";
import { browserLanguage, I18nProvider, translator, type Lang, type T } from "../i18n";
import { keys, useMe } from "../queries";
import { applyTheme, effectiveTheme, loadPrefs, savePrefs, systemDark, type Prefs } from "../ui/prefs";
import { Toasts } from "../ui/toast";
import { Shell } from "./Shell";

export interface RootCtx {
  prefs: Prefs;
  setPrefs: (p: Partial<Prefs>) => void;
  lang: Lang;
  t: T;
}

export function Root() {
  const [prefs, setPrefsState] = useState<Prefs>(loadPrefs);
  const [dark, setDark] = useState(systemDark);
  const me = useMe();
  const qc = useQueryClient();
  const navigate = useNavigate();
  const location = useLocation();

  const setPrefs = useCallback((p: Partial<Prefs>) => {
    setPrefsState((old) => {
      const merged = { ...old, ...p };
      savePrefs(merged);
      return merged;
    });
  }, []);

  // the server's copy of the user's choices wins once known
  const serverLang = me.data?.settings.language;
  const serverTheme = me.data?.settings.theme;
  useEffect(() => {
    if (serverLang || serverTheme)
      setPrefs({ ...(serverLang ? { lang: serverLang } : {}), ...(serverTheme ? { theme: serverTheme } : {}) });
  }, [serverLang, serverTheme, setPrefs]);

  // a signed-in user without a language gets the one they see, so titles match it
  const lang: Lang = prefs.lang ?? browserLanguage();
  useEffect(() => {
    if (me.data && !me.data.settings.language) {
      api.patchMe({ language: lang }).then((u) => qc.setQueryData(keys.me, u)).catch(() => undefined);
    }
  }, [me.data, lang, qc]);

  useEffect(() => {
    const mq = matchMedia("(prefers-color-scheme: dark)");
    const on = () => setDark(mq.matches);
    mq.addEventListener("change", on);
    return () => mq.removeEventListener("change", on);
  }, []);
  useEffect(() => applyTheme(effectiveTheme(prefs.theme, dark)), [prefs.theme, dark]);
  useEffect(() => {
    document.documentElement.lang = lang === "zh" ? "zh-CN" : "en";
  }, [lang]);

  useEffect(
    () =>
      onUnauthorized(() => {
        qc.setQueryData(keys.me, null);
        if (!location.pathname.startsWith("/login")) {
          navigate(`/login?next=${encodeURIComponent(location.pathname + location.search)}`, {
            replace: true,
          });
        }
      }),
    [qc, navigate, location],
  );

  const ctx = useMemo<RootCtx>(
    () => ({ prefs, setPrefs, lang, t: translator(lang) }),
    [prefs, setPrefs, lang],
  );
  return (
    <I18nProvider lang={lang}>
      <Outlet context={ctx} />
      <Toasts />
    </I18nProvider>
  );
}

export const useRoot = () => useOutletContext<RootCtx>();

export function SignedIn() {
  const root = useRoot();
  const me = useMe();
  const location = useLocation();
  if (me.isPending) return <div className="boot" aria-busy="true" />;
  const status = me.error instanceof ApiError ? me.error.status : null;
  if (status === 401 || (!me.error && me.data === null)) {
    const next = encodeURIComponent(location.pathname + location.search);
    return <Navigate to={`/login?next=${next}`} replace />;
  }
  if (me.error || !me.data) {
    // the server is down or failing: say so (this is not a logout)
    return (
      <div className="boot-error" role="alert">
        <p>{root.t("serverUnreachable")}</p>
        <button type="button" onClick={() => me.refetch()}>
          {root.t("retry")}
        </button>
      </div>
    );
  }
  return <Shell me={me.data} prefs={root.prefs} setPrefs={root.setPrefs} />;
}
