// The bar above every screen: the sidebar toggle, the screen's title and its own controls.
import type { ReactNode } from "react";
import { useApp } from "../app/context";
import { useT } from "../i18n";

export function TopBar({ title, icon, children }: { title: string; icon?: ReactNode; children?: ReactNode }) {
  const t = useT();
  const { sidebarOpen, setSidebarOpen, isNarrow } = useApp();
  return (
    <header className="topbar">
      {(!sidebarOpen || isNarrow) && (
        <button
          type="button"
          className="icon-btn"
          aria-label={t("toggleSidebar")}
          aria-expanded={sidebarOpen}
          aria-controls="sidebar"
          onClick={() => setSidebarOpen(!sidebarOpen)}
        >
          <span aria-hidden="true">☰</span>
        </button>
      )}
      <h1 className="topbar-title" title={title}>
        {icon && (
          <span className="topbar-icon" aria-hidden="true">
            {icon}
          </span>
        )}
        {title}
      </h1>
      <div className="topbar-tools">{children}</div>
    </header>
  );
}
