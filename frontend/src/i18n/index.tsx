// UI language: the user's saved choice, else the browser's, else English. `t(key, vars)` looks a
// string up in the typed catalogues (en.ts is the source; zh.ts must match it key for key).
import { createContext, useContext, useMemo, type ReactNode } from "react";
import { en, type MessageKey, type Messages } from "./en";
import { zh } from "./zh";

export type Lang = "en" | "zh";
export const LANGS: { id: Lang; label: string }[] = [
  { id: "en", label: "English" },
  { id: "zh", label: "中文" },
];
const CATALOGUES: Record<Lang, Messages> = { en, zh };

/** The first supported language among the browser's preferences. */
export function browserLanguage(langs: readonly string[] = navigator.languages ?? []): Lang {
  for (const l of langs) {
    const p = l.toLowerCase().split("-")[0];
    if (p === "zh" || p === "en") return p;
  }
  return "en";
}

export function format(template: string, vars?: Record<string, string | number>): string {
  if (!vars) return template;
  return template.replace(/\{(\w+)\}/g, (m, k: string) => (k in vars ? String(vars[k]) : m));
}

export type T = (key: MessageKey, vars?: Record<string, string | number>) => string;

export function translator(lang: Lang): T {
  const cat = CATALOGUES[lang] ?? en;
  return (key, vars) => format(cat[key] ?? en[key], vars);
}

/** The human message for an API error code (falls back to the server's own message). */
export function errorText(t: T, code: string, message?: string): string {
  const key = `err_${code}` as MessageKey;
  if (key in en) return t(key);
  return t("err_unknown", { message: message || code });
}

const Ctx = createContext<{ lang: Lang; t: T }>({ lang: "en", t: translator("en") });

export function I18nProvider({ lang, children }: { lang: Lang; children: ReactNode }) {
  const value = useMemo(() => ({ lang, t: translator(lang) }), [lang]);
  return <Ctx.Provider value={value}>{children}</Ctx.Provider>;
}

export const useI18n = () => useContext(Ctx);
export const useT = () => useContext(Ctx).t;
