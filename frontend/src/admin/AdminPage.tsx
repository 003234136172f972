// /admin/{section}: the administrators' console — users, usage, ratings, problem reports and
// jobs. The server decides (every /api/admin route answers 403 to anyone else); the page says
// so instead of showing an empty console.
import { NavLink, useParams } from "react-router";
import { useApp } from "../app/context";
import { TopBar } from "../chat/TopBar";
import { useT } from "../i18n";
import type { MessageKey } from "../i18n/en";
import { JobsSection } from "./JobsSection";
import { RatingsSection } from "./RatingsSection";
import { ReportsSection } from "./ReportsSection";
import { UsageSection } from "./UsageSection";
import { UsersSection } from "./UsersSection";

const SECTIONS: { id: string; label: MessageKey; view: () => React.ReactElement }[] = [
  { id: "users", label: "users", view: () => <UsersSection /> },
  { id: "usage", label: "usage", view: () => <UsageSection /> },
  { id: "ratings", label: "ratings", view: () => <RatingsSection /> },
  { id: "reports", label: "reports", view: () => <ReportsSection /> },
  { id: "jobs", label: "jobs", view: () => <JobsSection /> },
];

export function AdminOnly() {
  const t = useT();
  return (
    <p className="notice admin-only" role="alert">
      {t("adminOnly")}
    </p>
  );
}

export function AdminPage() {
  const t = useT();
  const { me } = useApp();
  const { section = "users" } = useParams();
  const current = SECTIONS.find((s) => s.id === section) ?? SECTIONS[0];
  return (
    <div className="page">
      <TopBar title={`${t("admin")} · ${t(current.label)}`} />
      <div className="page-body admin">
        {me.role !== "admin" ? (
          <AdminOnly />
        ) : (
          <>
            <nav className="admin-tabs" aria-label={t("admin")}>
              {SECTIONS.map((s) => (
                <NavLink key={s.id} to={`/admin/${s.id}`} className={s.id === current.id ? "active" : ""}>
                  {t(s.label)}
                </NavLink>
              ))}
            </nav>
            {current.view()}
          </>
        )}
      </div>
    </div>
  );
}
