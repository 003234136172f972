// Short notices (an action failed, something was copied) in one polite live region.
import { useSyncExternalStore } from "react";
import { useT } from "../i18n";

export interface Toast {
  id: number;
  text: string;
  kind: "info" | "error";
}

let toasts: Toast[] = [];
let next = 1;
const listeners = new Set<() => void>();
const emit = () => listeners.forEach((f) => f());

export function toast(text: string, kind: Toast["kind"] = "info"): void {
  const id = next++;
  toasts = [...toasts, { id, text, kind }];
  emit();
  setTimeout(() => dismiss(id), kind === "error" ? 8000 : 3000);
}

export function dismiss(id: number): void {
  toasts = toasts.filter((t) => t.id !== id);
  emit();
}

export function Toasts() {
  const t = useT();
  const items = useSyncExternalStore(
    (f) => {
      listeners.add(f);
      return () => listeners.delete(f);
    },
    () => toasts,
  );
  return (
    <div className="toasts" role="status" aria-live="polite">
      {items.map((x) => (
        <div key={x.id} className={`toast ${x.kind}`}>
          <span>{x.text}</span>
          <button type="button" className="icon-btn" aria-label={t("dismiss")} onClick={() => dismiss(x.id)}>
            ×
          </button>
        </div>
      ))}
    </div>
  );
}
