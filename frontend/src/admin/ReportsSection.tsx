// Admin → Problem reports: newest first, with the page, the reporter, the browser and the
// screenshot (fetched by the admin-only screenshot route; click for full size).
import { useQuery } from "@tanstack/react-query";
import { Link } from "react-router";
import { con, type Report } from "../api/console";
import { useT } from "../i18n";
import { when } from "../settings/util";
import { Guard } from "./Guard";

function ReportItem({ r }: { r: Report }) {
  const t = useT();
  const src = `/api/admin/user-feedback/${encodeURIComponent(r.id)}/screenshot`;
  return (
    <li className="report">
      <div className="report-head">
        <strong>{r.user_email ?? r.user_id}</strong>
        <span className="muted small">{when(r.created_at)}</span>
      </div>
      <p className="report-text">{r.description}</p>
      <p className="muted small">
        {r.page_path && <code>{r.page_path}</code>}
        {r.conversation_id && (
          <>
            {" · "}
            <Link to={`/c/${r.conversation_id}`}>{r.conversation_title || r.conversation_id}</Link>
          </>
        )}
        {" · "}
        {r.viewport_width}×{r.viewport_height} · {r.user_agent}
      </p>
      {r.screenshot && (
        <a href={src} target="_blank" rel="noreferrer" className="report-shot" aria-label={t("screenshot")}>
          <img src={src} alt={`${t("screenshot")} ${r.screenshot.width}×${r.screenshot.height}`} loading="lazy" />
        </a>
      )}
    </li>
  );
}

export function ReportsSection() {
  const t = useT();
  const q = useQuery({ queryKey: ["admin", "reports"], queryFn: con.reports });
  return (
    <Guard q={q}>
      {(d) => (
        <section aria-label={t("reports")}>
          {d.items.length === 0 && <p className="muted">{t("noReports")}</p>}
          <ul className="report-list">
            {d.items.map((r) => (
              <ReportItem key={r.id} r={r} />
            ))}
          </ul>
        </section>
      )}
    </Guard>
  );
}
