// What every screen of the signed-in app can reach: the user, the preferences, and the shell's
// dialogs and sidebar.
import { createContext, useContext } from "react";
import type { User } from "../api/types";
import type { Prefs } from "../ui/prefs";

export interface AppCtx {
  me: User;
  prefs: Prefs;
  setPrefs: (p: Partial<Prefs>) => void;
  sidebarOpen: boolean;
  setSidebarOpen: (open: boolean) => void;
  isNarrow: boolean;
  openSearch: () => void;
  openHelp: () => void;
}

export const AppContext = createContext<AppCtx | null>(null);

export function useApp(): AppCtx {
  const c = useContext(AppContext);
  if (!c) throw new Error("useApp outside the signed-in app");
  return c;
}
