// The model for the next answer, from /api/models (a conversation remembers its choice).
import { useT } from "../i18n";

import { useModels } from "../queries";

export function ModelPicker({ value, onChange }: { value: string; onChange: (id: string) => void }) {
  const t = useT();
  const models = useModels().data;
  if (!models) return null;
  const current = value || models.default;
  return (
    <label className="model-picker">
      <span className="sr-only">{t("model")}</span>
      <select value={current} onChange={(e) => onChange(e.target.value)} aria-label={t("model")}>
        {models.items.map((m) => (
          <option key={m.id} value={m.id}>
            {m.label}
          </option>
        ))}
      </select>
    </label>
  );
}
