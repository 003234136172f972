// A button that opens a menu of actions (WAI-ARIA menu button: arrow keys move, Escape closes and
// returns focus to the button).
import { useEffect, useId, useRef, useState, type ReactNode } from "react";

export interface MenuItem {
  label: string;
  /** A key when two items may have the same label. */
  id?: string;
  /** Shown on hover (the full text of a shortened label). */
  title?: string;
  onSelect: () => void;
  danger?: boolean;
}

export function MenuButton({
  label,
  items,
  children,
  className = "",
  buttonClass = "icon-btn",
  title,
}: {
  label: string;
  items: MenuItem[];
  children: ReactNode;
  className?: string;
  buttonClass?: string;
  title?: string;
}) {
  const [open, setOpen] = useState(false);
  const btn = useRef<HTMLButtonElement>(null);
  const menu = useRef<HTMLDivElement>(null);
  const id = useId();

  useEffect(() => {
    if (!open) return;
    const first = menu.current?.querySelector<HTMLElement>("[role=menuitem]");
    first?.focus();
    const onDoc = (e: MouseEvent) => {
      if (!menu.current?.contains(e.target as Node) && !btn.current?.contains(e.target as Node))
        setOpen(false);
    };
    document.addEventListener("mousedown", onDoc);
    return () => document.removeEventListener("mousedown", onDoc);
  }, [open]);

  const onKey = (e: React.KeyboardEvent) => {
    const els = [...(menu.current?.querySelectorAll<HTMLElement>("[role=menuitem]") ?? [])];
    const i = els.indexOf(document.activeElement as HTMLElement);
    if (e.key === "ArrowDown") {
      e.preventDefault();
      els[(i + 1) % els.length]?.focus();
    } else if (e.key === "ArrowUp") {
      e.preventDefault();
      els[(i - 1 + els.length) % els.length]?.focus();
    } else if (e.key === "Home") {
      e.preventDefault();
      els[0]?.focus();
    } else if (e.key === "End") {
      e.preventDefault();
      els[els.length - 1]?.focus();
    } else if (e.key === "Escape" || e.key === "Tab") {
      if (e.key === "Escape") e.preventDefault();
      e.stopPropagation();
      setOpen(false);
      btn.current?.focus();
    }
  };

  return (
    <div className={`menu-wrap ${className}`}>
      <button
        ref={btn}
        type="button"
        className={buttonClass}
        aria-label={label}
        title={title}
        aria-haspopup="menu"
        aria-expanded={open}
        aria-controls={open ? id : undefined}
        onClick={() => setOpen((o) => !o)}
      >
        {children}
      </button>
      {open && (
        <div ref={menu} id={id} role="menu" className="menu" aria-label={label} onKeyDown={onKey}>
          {items.map((it) => (
            <button
              key={it.id ?? it.label}
              type="button"
              role="menuitem"
              title={it.title}
              tabIndex={-1}
              className={it.danger ? "danger" : ""}
              onClick={() => {
                setOpen(false);
                btn.current?.focus();
                it.onSelect();
              }}
            >
              {it.label}
            </button>
          ))}
        </div>
      )}
    </div>
  );
}
