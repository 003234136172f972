// Theme and language preferences: kept in localStorage (so the login page already has them) and,
// once logged in, in the user's settings on the server.
import type { Lang } from "../i18n";

export type ThemePref = "system" | "light" | "dark";
const KEY = "chatmem.prefs";

export interface Prefs {
  theme: ThemePref;
  lang: Lang | null;
  sidebar: boolean | null;
}

export function loadPrefs(): Prefs {
  try {
    const p = JSON.parse(localStorage.getItem(KEY) || "{}");
    return {
      theme: ["light", "dark", "system"].includes(p.theme) ? p.theme : "system",
      lang: p.lang === "en" || p.lang === "zh" ? p.lang : null,
      sidebar: typeof p.sidebar === "boolean" ? p.sidebar : null,
    };
  } catch {
    return { theme: "system", lang: null, sidebar: null };
  }
}

export function savePrefs(p: Prefs): void {
  try {
    localStorage.setItem(KEY, JSON.stringify(p));
  } catch {
    /* private mode */
  }
}

export function systemDark(): boolean {
  return typeof matchMedia === "function" && matchMedia("(prefers-color-scheme: dark)").matches;
}

/** The theme actually shown: the preference, or the system's for "system". */
export function effectiveTheme(pref: ThemePref, dark = systemDark()): "light" | "dark" {
  return pref === "system" ? (dark ? "dark" : "light") : pref;
}

export function applyTheme(theme: "light" | "dark"): void {
  document.documentElement.dataset.theme = theme;
  document.documentElement.style.colorScheme = theme;
}
