// Create or edit a companion's persona: every field of the agent contract, each with its limit
// shown and a live count; the server's answer (422 and all) is shown in the dialog.
import { useState } from "react";
import { ApiError } from "../api/client";
import { con, type Agent, type AgentIn } from "../api/console";
import { errorText, useT } from "../i18n";
import type { MessageKey } from "../i18n/en";
import { Dialog, FormActions } from "../ui/Dialog";
import { PERSONA_FIELDS, STATUSES, VISIBILITIES, type PersonaField } from "./fields";

type Draft = Record<PersonaField["name"], string> & Pick<AgentIn, "visibility" | "status">;

function initial(a: Agent | null): Draft {
  const d = { visibility: a?.visibility ?? "private", status: a?.status ?? "published" } as Draft;
  for (const f of PERSONA_FIELDS) d[f.name] = (a?.[f.name] as string | null | undefined) ?? "";
  return d as Draft;
}

function body(d: Draft): AgentIn {
  return {
    ...d,
    opening_message: d.opening_message.trim() ? d.opening_message : null,
    image_key: d.image_key.trim() ? d.image_key.trim() : null,
  } as AgentIn;
}

function Field({ f, value, onChange }: { f: PersonaField; value: string; onChange: (v: string) => void }) {
  const t = useT();
  const id = `persona-${f.name}`;
  const props = {
    id,
    name: f.name,
    value,
    maxLength: f.max,
    required: f.required,
    "aria-describedby": `${id}-limit`,
    onChange: (e: React.ChangeEvent<HTMLInputElement | HTMLTextAreaElement>) => onChange(e.target.value),
  };
  return (
    <div className="persona-field">
      <label htmlFor={id}>{t(f.label)}</label>
      {f.long ? <textarea rows={3} {...props} /> : <input {...props} />}
      <span id={`${id}-limit`} className="muted small limit">
        {t("limitChars", { n: f.max })} · {t("charCount", { n: value.length, max: f.max })}
      </span>
    </div>
  );
}

export function PersonaEditor({
  agent,
  open,
  onClose,
  onSaved,
}: {
  agent: Agent | null;
  open: boolean;
  onClose: () => void;
  onSaved: (a: Agent) => void;
}) {
  const t = useT();
  const [d, setD] = useState<Draft>(() => initial(agent));
  const [error, setError] = useState("");
  const save = async (e: React.FormEvent) => {
    e.preventDefault();
    setError("");
    try {
      const saved = agent ? await con.patchAgent(agent.id, body(d)) : await con.createAgent(body(d));
      onSaved(saved);
    } catch (err) {
      setError(err instanceof ApiError ? errorText(t, err.code, err.message) : String(err));
    }
  };
  return (
    <Dialog open={open} onClose={onClose} title={agent ? t("companionEdit") : t("newCompanion")} className="persona-dialog">
      <form className="persona-form" onSubmit={save}>
        {PERSONA_FIELDS.map((f) => (
          <Field key={f.name} f={f} value={d[f.name]} onChange={(v) => setD({ ...d, [f.name]: v })} />
        ))}
        <div className="persona-choices">
          <label>
            <span>{t("personaVisibility")}</span>
            <select value={d.visibility} onChange={(e) => setD({ ...d, visibility: e.target.value as Draft["visibility"] })}>
              {VISIBILITIES.map((v) => (
                <option key={v} value={v}>
                  {t(`vis_${v}` as MessageKey)}
                </option>
              ))}
            </select>
          </label>
          <label>
            <span>{t("personaStatus")}</span>
            <select value={d.status} onChange={(e) => setD({ ...d, status: e.target.value as Draft["status"] })}>
              {STATUSES.map((s) => (
                <option key={s} value={s}>
                  {t(`agentStatus_${s}` as MessageKey)}
                </option>
              ))}
            </select>
          </label>
        </div>
        <FormActions error={error} onCancel={onClose} />
      </form>
    </Dialog>
  );
}
