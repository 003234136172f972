// Modal dialogs on the native <dialog> element: focus is trapped and Escape closes, for free.
import { useEffect, useRef, type ReactNode } from "react";
import { useT } from "../i18n";

export function Dialog({
  open,
  onClose,
  title,
  children,
  className = "",
}: {
  open: boolean;
  onClose: () => void;
  title: string;
  children: ReactNode;
  className?: string;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const t = useT();
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) {
      d.showModal();
      // showModal focuses the first focusable element (the close button); prefer the field
      // the dialog marks with data-autofocus
      d.querySelector<HTMLElement>("[data-autofocus]")?.focus();
    }
    if (!open && d.open) d.close();
  }, [open]);
  return (
    <dialog
      ref={ref}
      className={`dialog ${className}`}
      aria-label={title}
      onClose={onClose}
      onCancel={(e) => {
        e.preventDefault();
        onClose();
      }}
      onClick={(e) => {
        if (e.target === ref.current) onClose(); // a click on the backdrop
      }}
    >
      {open && (
        <div className="dialog-body">
          <header className="dialog-head">
            <h2>{title}</h2>
            <button type="button" className="icon-btn" aria-label={t("close")} onClick={onClose}>
              ×
            </button>
          </header>
          {children}
        </div>
      )}
    </dialog>
  );
}

/** "Are you sure?" with a destructive confirm button (focused first is Cancel). */
export function ConfirmDialog({
  open,
  title,
  body,
  confirm,
  onConfirm,
  onClose,
}: {
  open: boolean;
  title: string;
  body: string;
  confirm: string;
  onConfirm: () => void;
  onClose: () => void;
}) {
  const t = useT();
  return (
    <Dialog open={open} onClose={onClose} title={title} className="confirm">
      <p>{body}</p>
      <div className="dialog-actions">
        <button type="button" data-autofocus onClick={onClose}>
          {t("cancel")}
        </button>
        <button
          type="button"
          className="danger"
          onClick={() => {
            onConfirm();
            onClose();
          }}
        >
          {confirm}
        </button>
      </div>
    </Dialog>
  );
}

/** The end of a dialog's form: its error (announced), then Cancel and the submit button. */
export function FormActions({
  error,
  onCancel,
  submit,
}: {
  error?: string | null;
  onCancel: () => void;
  submit?: string;
}) {
  const t = useT();
  return (
    <>
      {error && (
        <p className="form-error" role="alert">
          {error}
        </p>
      )}
      <div className="dialog-actions">
        <button type="button" onClick={onCancel}>
          {t("cancel")}
        </button>
        <button type="submit" className="primary">
          {submit ?? t("save")}
        </button>
      </div>
    </>
  );
}
