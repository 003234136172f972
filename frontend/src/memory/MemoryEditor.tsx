// Add or edit a memory: text, type, importance, validity (and, when adding, which companion it
// belongs to). The limits shown are the server's (MemoryIn / MemoryPatch).
import { useState } from "react";
import { ApiError } from "../api/client";
import { lib, type Memory } from "../api/library";
import { errorText, useT } from "../i18n";
import { Dialog, FormActions } from "../ui/Dialog";
import { day, fromDay } from "./words";

export const TEXT_MAX = 2000;
export const TYPE_MAX = 80;

export function MemoryEditor({
  open,
  memory,
  agents,
  onClose,
  onSaved,
}: {
  open: boolean;
  /** null: a new memory. */
  memory: Memory | null;
  agents: { id: string; name: string }[];
  onClose: () => void;
  onSaved: (m: Memory) => void;
}) {
  const t = useT();
  const [error, setError] = useState("");
  const [text, setText] = useState(memory?.memory_text ?? "");
  const submit = async (e: React.FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    const memory_text = String(f.get("memory_text") || "").trim();
    const memory_type = String(f.get("memory_type") || "").trim();
    const importance = Number(f.get("importance") || 3);
    const fromField = String(f.get("valid_from") || "");
    const untilField = String(f.get("valid_until") || "");
    const valid_from = fromDay(fromField);
    const valid_until = fromDay(untilField);
    if (!memory_text) return;
    if (valid_from != null && valid_until != null && valid_until < valid_from) {
      setError(t("memValidityOrder"));
      return;
    }
    try {
      const saved = memory
        ? await lib.patchMemory(memory.id, {
            memory_text,
            memory_type,
            importance,
            // the date fields show whole days: dates the user left alone are not sent back, or
            // saving a new text would move a precise bound (a memory valid for the next hours) to
            // that day's midnight UTC, which may be in the past
            ...(fromField !== day(memory.valid_from) || untilField !== day(memory.valid_until)
              ? { valid_from, valid_until }
              : {}),
          })
        : await lib.createMemory({
            memory_text,
            memory_type,
            importance,
            valid_from,
            valid_until,
            agent_id: String(f.get("agent_id") || "") || null,
          });
      onSaved(saved);
      onClose();
    } catch (err) {
      setError(err instanceof ApiError ? errorText(t, err.code, err.message) : String(err));
    }
  };
  return (
    <Dialog open={open} onClose={onClose} title={memory ? t("memEditTitle") : t("memAddTitle")} className="mem-editor">
      <form className="stack-form" onSubmit={submit}>
        <label>
          <span>
            {t("memText")} <small className="muted">{t("charsLeft", { n: TEXT_MAX - text.length })}</small>
          </span>
          <textarea
            name="memory_text"
            data-autofocus
            required
            maxLength={TEXT_MAX}
            rows={4}
            value={text}
            onChange={(e) => setText(e.target.value)}
          />
        </label>
        <label>
          <span>{t("memType")}</span>
          <input name="memory_type" maxLength={TYPE_MAX} defaultValue={memory?.memory_type ?? ""} placeholder="preference" />
        </label>
        <label>
          <span>{t("memImportance")} (1–5)</span>
          <input name="importance" type="number" min={1} max={5} defaultValue={memory?.importance ?? 3} />
        </label>
        <div className="mem-dates">
          <label>
            <span>{t("memValidFrom")}</span>
            <input name="valid_from" type="date" defaultValue={day(memory?.valid_from)} />
          </label>
          <label>
            <span>{t("memValidUntil")}</span>
            <input name="valid_until" type="date" defaultValue={day(memory?.valid_until)} />
          </label>
        </div>
        {!memory && agents.length > 0 && (
          <label>
            <span>{t("memScope")}</span>
            <select name="agent_id" defaultValue="">
              <option value="">{t("memUserWide")}</option>
              {agents.map((a) => (
                <option key={a.id} value={a.id}>
                  {a.name}
                </option>
              ))}
            </select>
          </label>
        )}
        <FormActions error={error} onCancel={onClose} />
      </form>
    </Dialog>
  );
}
