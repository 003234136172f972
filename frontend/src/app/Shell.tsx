// The signed-in layout: a collapsible sidebar (a drawer below 768 px) beside the routed screen,
// the search and help dialogs, and the global keyboard shortcuts.
import { useCallback, useEffect, useMemo, useState } from "react";
import { Outlet, useLocation, useNavigate } from "react-router";
import type { User } from "../api/types";
import { Sidebar } from "../sidebar/Sidebar";
import { SearchDialog } from "../sidebar/SearchDialog";
import type { Prefs } from "../ui/prefs";
import { AppContext, type AppCtx } from "./context";
import { HelpDialog } from "./HelpDialog";

const NARROW = "(max-width: 768px)";

function useMedia(q: string): boolean {
  const [m, setM] = useState(() => matchMedia(q).matches);
  useEffect(() => {
    const mq = matchMedia(q);
    const on = () => setM(mq.matches);
    mq.addEventListener("change", on);
    return () => mq.removeEventListener("change", on);
  }, [q]);
  return m;
}

function inTextField(e: KeyboardEvent): boolean {
  const el = e.target as HTMLElement | null;
  return !!el && (el.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(el.tagName));
}

export function Shell({ me, prefs, setPrefs }: { me: User; prefs: Prefs; setPrefs: (p: Partial<Prefs>) => void }) {
  const isNarrow = useMedia(NARROW);
  const [wideOpen, setWideOpen] = useState(prefs.sidebar ?? true);
  const [narrowOpen, setNarrowOpen] = useState(false);
  const [searchOpen, setSearchOpen] = useState(false);
  const [helpOpen, setHelpOpen] = useState(false);
  const navigate = useNavigate();
  const location = useLocation();
  const sidebarOpen = isNarrow ? narrowOpen : wideOpen;

  const setSidebarOpen = useCallback(
    (open: boolean) => {
      if (isNarrow) setNarrowOpen(open);
      else {
        setWideOpen(open);
        setPrefs({ sidebar: open });
      }
    },
    [isNarrow, setPrefs],
  );

  // the drawer closes when the user navigates on a phone
  useEffect(() => {
    setNarrowOpen(false);
  }, [location.pathname]);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const mod = e.ctrlKey || e.metaKey;
      if (mod && !e.shiftKey && e.key.toLowerCase() === "k") {
        e.preventDefault();
        setSearchOpen(true);
      } else if (mod && e.shiftKey && e.key.toLowerCase() === "o") {
        e.preventDefault();
        navigate("/");
        setTimeout(() => document.getElementById("composer-input")?.focus(), 50);
      } else if (mod && !e.shiftKey && e.key.toLowerCase() === "b") {
        e.preventDefault();
        setSidebarOpen(!sidebarOpen);
      } else if (e.shiftKey && e.key === "Escape") {
        e.preventDefault();
        document.getElementById("composer-input")?.focus();
      } else if ((e.key === "?" && !inTextField(e)) || (mod && e.key === "/")) {
        e.preventDefault();
        setHelpOpen(true);
      } else if (e.key === "Escape" && isNarrow && narrowOpen) {
        setNarrowOpen(false);
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [navigate, setSidebarOpen, sidebarOpen, isNarrow, narrowOpen]);

  const ctx = useMemo<AppCtx>(
    () => ({
      me,
      prefs,
      setPrefs,
      sidebarOpen,
      setSidebarOpen,
      isNarrow,
      openSearch: () => setSearchOpen(true),
      openHelp: () => setHelpOpen(true),
    }),
    [me, prefs, setPrefs, sidebarOpen, setSidebarOpen, isNarrow],
  );

  return (
    <AppContext.Provider value={ctx}>
      <div className={`shell ${sidebarOpen ? "sidebar-open" : "sidebar-closed"} ${isNarrow ? "narrow" : "wide"}`}>
        <Sidebar />
        {isNarrow && sidebarOpen && (
          <div className="scrim" aria-hidden="true" onClick={() => setNarrowOpen(false)} />
        )}
        <main className="main" id="main">
          <Outlet />
        </main>
      </div>
      <SearchDialog open={searchOpen} onClose={() => setSearchOpen(false)} />
      <HelpDialog open={helpOpen} onClose={() => setHelpOpen(false)} />
    </AppContext.Provider>
  );
}
