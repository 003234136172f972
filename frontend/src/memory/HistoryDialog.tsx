// A memory's change history: every event (who, when, what changed) and its supersession chain.
import { useQuery } from "@tanstack/react-query";
import { lib, type Memory } from "../api/library";
import { useT } from "../i18n";
import { Dialog } from "../ui/Dialog";
import { statusKey } from "./words";

function show(v: unknown): string {
  if (v == null) return "";
  if (typeof v === "object") {
    return Object.entries(v as Record<string, unknown>)
      .map(([k, x]) => `${k}: ${typeof x === "object" ? JSON.stringify(x) : String(x)}`)
      .join("; ");
  }
  return String(v);
}

export function HistoryDialog({ memory, onClose }: { memory: Memory | null; onClose: () => void }) {
  const t = useT();
  const h = useQuery({
    queryKey: ["memory-history", memory?.id],
    queryFn: () => lib.memoryHistory(memory!.id),
    enabled: !!memory,
  });
  return (
    <Dialog open={!!memory} onClose={onClose} title={t("memHistory")} className="mem-history">
      {h.isPending && <p className="muted">…</p>}
      {h.data && (
        <>
          {h.data.chain.length > 1 && (
            <section>
              <h3>{t("memChain")}</h3>
              <ol className="mem-chain">
                {h.data.chain.map((v) => (
                  <li key={v.id} className={v.id === memory?.id ? "current" : ""}>
                    {v.memory_text} <span className="muted small">({t(statusKey(v.status))})</span>
                  </li>
                ))}
              </ol>
            </section>
          )}
          <ol className="mem-events">
            {h.data.events.map((e) => (
              <li key={e.id}>
                <div>
                  <strong>{e.event}</strong>{" "}
                  <time className="muted small">{new Date(e.created_at).toLocaleString()}</time>
                  {e.reason && <span className="muted small"> — {e.reason}</span>}
                </div>
                {(e.before != null || e.after != null) && (
                  <div className="small mem-diff">
                    {show(e.before) && <del>{show(e.before)}</del>} {show(e.after) && <ins>{show(e.after)}</ins>}
                  </div>
                )}
              </li>
            ))}
          </ol>
        </>
      )}
    </Dialog>
  );
}
