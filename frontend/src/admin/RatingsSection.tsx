// Admin → Ratings: likes and dislikes per model with the dislike reasons, and the newest
// ratings that carry reasons or a comment.
import { useQuery } from "@tanstack/react-query";
import { con } from "../api/console";
import { useT } from "../i18n";
import type { MessageKey } from "../i18n/en";
import { when } from "../settings/util";
import { Guard } from "./Guard";
import { Icon } from "../ui/Icon";

export function RatingsSection() {
  const t = useT();
  const q = useQuery({ queryKey: ["admin", "ratings"], queryFn: () => con.ratings(30) });
  const reason = (r: string) => {
    const key = `fb_${r}` as MessageKey;
    const text = t(key);
    return text === key ? r : text;
  };
  return (
    <Guard q={q}>
      {(d) => (
        <section aria-label={t("ratings")}>
          {d.models.length === 0 && <p className="muted">{t("noRatings")}</p>}
          <table className="admin-table ratings-table">
            <thead>
              <tr>
                <th>{t("model")}</th>
                <th>{t("likes")}</th>
                <th>{t("dislikes")}</th>
                <th>{t("reasons")}</th>
              </tr>
            </thead>
            <tbody>
              {d.models.map((m) => (
                <tr key={m.model_id} data-model={m.model_id}>
                  <td>{m.model_id || "—"}</td>
                  <td>
                    <Icon name="thumbUp" /> {m.likes}
                  </td>
                  <td>
                    <Icon name="thumbDown" /> {m.dislikes}
                  </td>
                  <td>
                    {Object.entries(m.reasons)
                      .map(([r, n]) => `${reason(r)} × ${n}`)
                      .join(", ")}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <h3>{t("recentRatings")}</h3>
          <ul className="rating-list">
            {d.recent.map((r, i) => (
              <li key={i}>
                <span role="img" aria-label={r.rating === "like" ? t("likes") : t("dislikes")}>
                  <Icon name={r.rating === "like" ? "thumbUp" : "thumbDown"} />
                </span> <strong>{r.model_id || "—"}</strong>{" "}
                <span className="muted small">
                  {r.user_email} · {when(r.updated_at)}
                </span>
                {r.reasons.length > 0 && <div>{r.reasons.map(reason).join(", ")}</div>}
                {r.comment && <blockquote>{r.comment}</blockquote>}
              </li>
            ))}
          </ul>
        </section>
      )}
    </Guard>
  );
}
