// "What the model saw": an answer's context report (or the next turn's preview) — the sections
// and their tokens against the window, the memories, summaries and recalled messages that went
// in, the messages left out and any compaction — readable at a glance.
import { useQuery } from "@tanstack/react-query";
import { Link } from "react-router";
import { lib } from "../api/library";
import { useT } from "../i18n";
import { Dialog } from "../ui/Dialog";
import { bars, type Report } from "./report";

function useMemoryTexts(ids: string[]) {
  return useQuery({
    queryKey: ["context-memories", ids],
    queryFn: () =>
      Promise.all(
        ids.slice(0, 50).map((id) =>
          lib.memory(id).then(
            (m) => ({ id, text: m.memory_text, status: m.status }),
            () => ({ id, text: null as string | null, status: "DELETED" }),
          ),
        ),
      ),
    enabled: ids.length > 0,
  });
}

export function ContextPanel({
  open,
  cid,
  messageId,
  onClose,
}: {
  open: boolean;
  cid: string;
  /** The answer whose report to show; undefined: the next turn's preview. */
  messageId?: string;
  onClose: () => void;
}) {
  const t = useT();
  const q = useQuery({
    queryKey: ["context", cid, messageId ?? "next"],
    queryFn: () => lib.context(cid, messageId),
    enabled: open,
    staleTime: messageId ? 60_000 : 0,
  });
  const r = (q.data?.report ?? {}) as Report;
  const memIds = r.memory_ids ?? [];
  const mems = useMemoryTexts(open ? memIds : []);
  const title = messageId ? t("ctxTitle") : t("ctxNextTitle");
  const used = r.total_tokens ?? 0;
  const windowSize = r.window ?? r.limit ?? 0;
  const comp = r.compaction;
  return (
    <Dialog open={open} onClose={onClose} title={title} className="context-panel">
      {q.isPending && <p className="muted">…</p>}
      {q.isError && (
        <p role="alert" className="form-error">
          {t("ctxNone")}
        </p>
      )}
      {q.data && (
        <div className="ctx">
          <p className="ctx-total">
            <strong>{t("ctxTokens", { used: used.toLocaleString(), window: windowSize.toLocaleString() })}</strong>
            {q.data.model && <span className="muted small"> · {q.data.model}</span>}
            {r.reserved_output_tokens ? (
              <span className="muted small"> · {t("ctxReserved", { n: r.reserved_output_tokens.toLocaleString() })}</span>
            ) : null}
          </p>
          <div className="ctx-bar" role="img" aria-label={t("ctxBarLabel")}>
            {bars(r).map((b) => (
              <span key={b.name} className={`ctx-seg seg-${b.name}`} style={{ width: `${b.pct}%` }} title={`${b.name}: ${b.tokens}`} />
            ))}
          </div>
          <table className="ctx-sections">
            <caption className="sr-only">{t("ctxSections")}</caption>
            <thead>
              <tr>
                <th scope="col">{t("ctxSection")}</th>
                <th scope="col">{t("ctxTokensCol")}</th>
              </tr>
            </thead>
            <tbody>
              {(r.sections ?? []).map((s) => (
                <tr key={s.name} data-section={s.name}>
                  <th scope="row">
                    <span className={`ctx-dot seg-${s.name}`} aria-hidden="true" /> {s.name}
                  </th>
                  <td>{s.tokens.toLocaleString()}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <ul className="ctx-facts">
            <li>{t("ctxMessages", { n: (r.message_ids ?? []).length })}</li>
            {(r.dropped_message_count ?? 0) > 0 && <li className="warn">{t("ctxDropped", { n: r.dropped_message_count ?? 0 })}</li>}
            {(r.summary_block_ids ?? []).length > 0 && <li>{t("ctxSummaries", { n: (r.summary_block_ids ?? []).length })}</li>}
            {(r.recall_message_ids ?? []).length > 0 && <li>{t("ctxRecalled", { n: (r.recall_message_ids ?? []).length })}</li>}
            {(r.truncated ?? []).length > 0 && <li className="warn">{t("ctxTruncated", { what: (r.truncated ?? []).join(", ") })}</li>}
            {comp?.ran && <li>{t("ctxCompacted")}</li>}
            {!comp?.ran && comp?.needed && <li className="warn">{t("ctxCompactionNeeded")}</li>}
            {r.memory_error && <li className="warn">{t("ctxMemoryError")}</li>}
          </ul>
          <section aria-labelledby="ctx-mem-h">
            <h3 id="ctx-mem-h">{t("ctxMemories", { n: memIds.length })}</h3>
            {memIds.length === 0 ? (
              <p className="muted small">{t("ctxNoMemories")}</p>
            ) : (
              <ul className="ctx-memories">
                {(mems.data ?? memIds.map((id) => ({ id, text: "…", status: "" }))).map((m) => (
                  <li key={m.id} data-id={m.id}>
                    {m.text ?? <em className="muted">{t("ctxMemoryGone")}</em>}
                  </li>
                ))}
              </ul>
            )}
            <Link to="/memories" className="small" onClick={onClose}>
              {t("ctxOpenLibrary")}
            </Link>
          </section>
        </div>
      )}
    </Dialog>
  );
}
