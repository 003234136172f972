// The sidebar: new chat, search, projects, the conversation list, and the account links.
import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { NavLink, useNavigate } from "react-router";
import { api } from "../api/endpoints";
import { useApp } from "../app/context";
import { useT } from "../i18n";
import { keys, useProjects } from "../queries";
import { ConversationList } from "./ConversationList";
import { ProjectDialog } from "./ProjectDialog";
import { WorkspaceSwitcher } from "../workspaces/WorkspaceSwitcher";
import { ReportDialog } from "../report/ReportDialog";
import { Icon } from "../ui/Icon";

export function Sidebar() {
  const t = useT();
  const { me, sidebarOpen, setSidebarOpen, openSearch, openHelp, isNarrow } = useApp();
  const projects = useProjects().data?.items ?? [];
  const navigate = useNavigate();
  const qc = useQueryClient();
  const [newProject, setNewProject] = useState(false);
  const [reporting, setReporting] = useState(false);

  return (
    <nav
      id="sidebar"
      className="sidebar"
      aria-label={t("chats")}
      hidden={!sidebarOpen}
      {...(isNarrow ? { role: "dialog", "aria-modal": true } : {})}
    >
      <div className="sidebar-head">
        <span className="brand-name">
          <span className="brand" aria-hidden="true">◆</span> chatmem
        </span>
        <button
          type="button"
          className="icon-btn"
          aria-label={isNarrow ? t("closeSidebar") : t("toggleSidebar")}
          aria-expanded={sidebarOpen}
          aria-controls="sidebar"
          onClick={() => setSidebarOpen(false)}
        >
          <span aria-hidden="true">{isNarrow ? "×" : "«"}</span>
        </button>
      </div>
      <WorkspaceSwitcher />
      <div className="sidebar-actions">
        <button
          type="button"
          className="primary new-chat"
          onClick={() => {
            navigate("/");
            setTimeout(() => document.getElementById("composer-input")?.focus(), 50);
          }}
        >
          + {t("newChat")}
        </button>
        <button type="button" className="search-btn" onClick={openSearch} aria-keyshortcuts="Control+K">
          {t("searchChats")} <kbd>Ctrl K</kbd>
        </button>
      </div>
      <div className="sidebar-scroll">
        <section aria-labelledby="projects-h" className="sidebar-section">
          <div className="section-head">
            <h2 id="projects-h">{t("projects")}</h2>
            <button type="button" className="icon-btn small" aria-label={t("newProject")} onClick={() => setNewProject(true)}>
              +
            </button>
          </div>
          <ul className="project-list">
            {projects.map((p) => (
              <li key={p.id}>
                <NavLink to={`/projects/${p.id}`} className="conv-link">
                  <span aria-hidden="true">{p.emoji || <Icon name="folder" />}</span> <span className="conv-title">{p.name}</span>
                </NavLink>
              </li>
            ))}
          </ul>
        </section>
        <section aria-labelledby="chats-h" className="sidebar-section">
          <div className="section-head">
            <h2 id="chats-h">{t("chats")}</h2>
          </div>
          <ConversationList filter={{}} projects={projects} empty={t("noChats")} label={t("chats")} />
        </section>
      </div>
      <div className="sidebar-foot">
        <NavLink to="/archive" className="foot-link">
          {t("archive")}
        </NavLink>
        <NavLink to="/companions" className="foot-link">
          {t("companions")}
        </NavLink>
        <NavLink to="/memories" className="foot-link">
          {t("memoryLibrary")}
        </NavLink>
        <NavLink to="/settings" className="foot-link">
          {t("settings")}
        </NavLink>
        {me.role === "admin" && (
          <NavLink to="/admin" className="foot-link">
            {t("admin")}
          </NavLink>
        )}
        <button type="button" className="foot-link" onClick={() => setReporting(true)}>
          {t("reportProblem")}
        </button>
        <button type="button" className="foot-link" onClick={openHelp} aria-keyshortcuts="?">
          {t("keyboardShortcuts")}
        </button>
        <div className="foot-row">
          <span className="muted me" title={me.email}>
            {me.name || me.email}
          </span>
          <button
            type="button"
            className="foot-link"
            onClick={async () => {
              await api.logout().catch(() => undefined);
              qc.clear();
              qc.setQueryData(keys.me, null);
              navigate("/login", { replace: true });
            }}
          >
            {t("logOut")}
          </button>
        </div>
      </div>
      <ProjectDialog open={newProject} onClose={() => setNewProject(false)} />
      <ReportDialog open={reporting} onClose={() => setReporting(false)} />
    </nav>
  );
}
