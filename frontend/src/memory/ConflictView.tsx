// An UNKNOWN_CURRENT conflict: two or more values of one slot the extractor could not order,
// side by side, with "keep this one", "keep both" and "edit".
import type { Memory } from "../api/library";
import { useT } from "../i18n";
import { day } from "./words";

export function ConflictView({
  group,
  keepOne,
  keepAll,
  edit,
}: {
  group: Memory[];
  keepOne: (keep: Memory, others: Memory[]) => void;
  keepAll: (all: Memory[]) => void;
  edit: (m: Memory) => void;
}) {
  const t = useT();
  return (
    <section className="mem-conflict" aria-label={t("memConflictOf", { slot: group[0].slot })}>
      <h3>{t("memConflictOf", { slot: group[0].slot })}</h3>
      <div className="mem-conflict-sides">
        {group.map((m) => (
          <div key={m.id} className="mem-side">
            <p className="mem-text">{m.memory_text}</p>
            <p className="muted small">{day(m.valid_from ?? m.created_at)}</p>
            <div className="mem-actions">
              <button
                type="button"
                className="primary"
                onClick={() =>
                  keepOne(
                    m,
                    group.filter((x) => x.id !== m.id),
                  )
                }
              >
                {t("memKeepThis")}
              </button>
              <button type="button" onClick={() => edit(m)}>
                {t("edit")}
              </button>
            </div>
          </div>
        ))}
      </div>
      <button type="button" onClick={() => keepAll(group)}>
        {t("memKeepBoth")}
      </button>
    </section>
  );
}
