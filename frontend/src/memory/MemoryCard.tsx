// One memory in the library: its text and every field a person may want to check (type, slot,
// status in words, importance, confidence, validity, scope, source messages), and its actions.
import { Link } from "react-router";
import type { Memory } from "../api/library";
import { useT } from "../i18n";
import { MenuButton } from "../ui/Menu";
import { day, percent, statusKey } from "./words";

export interface CardActions {
  edit: (m: Memory) => void;
  toggle: (m: Memory) => void;
  remove: (m: Memory) => void;
  purge: (m: Memory) => void;
  history: (m: Memory) => void;
}

export function MemoryCard({
  m,
  agentName,
  actions,
}: {
  m: Memory;
  agentName: (id: string) => string;
  actions: CardActions;
}) {
  const t = useT();
  const disabled = m.status === "DISABLED";
  const valid =
    m.valid_from || m.valid_until
      ? `${day(m.valid_from) || "…"} – ${day(m.valid_until) || "…"}`
      : t("memAlways");
  return (
    <li className={`mem-card status-${m.status.toLowerCase()}`} data-id={m.id}>
      <p className="mem-text">{m.memory_text}</p>
      <dl className="mem-fields">
        <div>
          <dt>{t("memStatus")}</dt>
          <dd className="mem-status">{t(statusKey(m.status))}</dd>
        </div>
        {m.memory_type && (
          <div>
            <dt>{t("memType")}</dt>
            <dd>{m.memory_type}</dd>
          </div>
        )}
        {m.slot && (
          <div>
            <dt>{t("memSlot")}</dt>
            <dd>
              <code>{m.slot}</code>
            </dd>
          </div>
        )}
        <div>
          <dt>{t("memImportance")}</dt>
          <dd aria-label={`${m.importance}/5`}>{"★".repeat(m.importance) + "☆".repeat(5 - m.importance)}</dd>
        </div>
        <div>
          <dt>{t("memConfidence")}</dt>
          <dd>{percent(m.confidence)}</dd>
        </div>
        <div>
          <dt>{t("memValidity")}</dt>
          <dd>{valid}</dd>
        </div>
        <div>
          <dt>{t("memScope")}</dt>
          <dd>{m.agent_id ? agentName(m.agent_id) : t("memUserWide")}</dd>
        </div>
      </dl>
      {m.source_messages.length > 0 && (
        <ul className="mem-sources" aria-label={t("memSource")}>
          {m.source_messages.map((s) => (
            <li key={s.id}>
              <Link to={`/c/${s.conversation_id}?m=${s.id}`} className="mem-source">
                ↪ {s.excerpt}
              </Link>
            </li>
          ))}
        </ul>
      )}
      <div className="mem-actions">
        <button type="button" className="act" onClick={() => actions.edit(m)}>
          {t("edit")}
        </button>
        {m.status !== "STALE" && (
          <button type="button" className="act" onClick={() => actions.toggle(m)}>
            {disabled ? t("memEnable") : t("memDisable")}
          </button>
        )}
        <button type="button" className="act" onClick={() => actions.history(m)}>
          {t("memHistory")}
        </button>
        <MenuButton
          label={t("moreActions")}
          className="mem-menu"
          items={[
            { label: t("delete"), onSelect: () => actions.remove(m), danger: true },
            { label: t("memPurge"), onSelect: () => actions.purge(m), danger: true },
          ]}
        >
          <span aria-hidden="true">⋯</span>
        </MenuButton>
      </div>
    </li>
  );
}
