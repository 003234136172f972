// Admin → Jobs: the queue by status (failed first by default) with each failed job's error and
// a Retry button.
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { con, type Job, type JobStatus } from "../api/console";
import { useT } from "../i18n";
import { fail, when } from "../settings/util";
import { toast } from "../ui/toast";
import { Guard } from "./Guard";

const STATUSES: JobStatus[] = ["failed", "queued", "running", "done"];

function JobRow({ j }: { j: Job }) {
  const t = useT();
  const qc = useQueryClient();
  const retry = async () => {
    try {
      await con.retryJob(j.id);
      toast(t("retried"));
      qc.invalidateQueries({ queryKey: ["admin", "jobs"] });
    } catch (e) {
      fail(t, e);
    }
  };
  return (
    <li className={`job job-${j.status}`} data-job={j.id}>
      <div className="job-head">
        <strong>{j.kind}</strong>
        <span className="badge">{j.status}</span>
        <span className="muted small">
          {j.attempts}/{j.max_attempts} · {when(j.updated_at)}
        </span>
        {j.status === "failed" && (
          <button type="button" onClick={retry} aria-label={`${t("retry")} ${j.kind}`}>
            {t("retry")}
          </button>
        )}
      </div>
      {j.last_error && <pre className="job-error">{j.last_error}</pre>}
    </li>
  );
}

export function JobsSection() {
  const t = useT();
  const [status, setStatus] = useState<JobStatus | "">("failed");
  const q = useQuery({ queryKey: ["admin", "jobs", status], queryFn: () => con.jobs(status || undefined) });
  return (
    <section aria-label={t("jobs")}>
      <div className="admin-filters">
        <label>
          <span>{t("memStatus")}</span>
          <select value={status} onChange={(e) => setStatus(e.target.value as JobStatus | "")}>
            <option value="">{t("jobStatusAll")}</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
      </div>
      <Guard q={q}>
        {(d) => (
          <>
            {d.items.length === 0 && <p className="muted">{t("noJobs")}</p>}
            <ul className="job-list">
              {d.items.map((j) => (
                <JobRow key={j.id} j={j} />
              ))}
            </ul>
          </>
        )}
      </Guard>
    </section>
  );
}
