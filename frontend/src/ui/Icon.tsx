// The few pictograms the app draws itself, as inline SVG. Emoji (👍 📌 🧠 📁) needed a colour
// emoji font, and a machine without one (a Linux server's Chromium, many desktops) drew empty
// boxes; these follow the text colour and size and need no font at all.
import type { ReactNode } from "react";

export type IconName = "thumbUp" | "thumbDown" | "pin" | "memory" | "folder" | "thread";

const THUMB = (
  <>
    <path d="M7 11v9H4v-9z" />
    <path d="M7 11l4-8a2 2 0 0 1 3 2l-1 5h5.5a2 2 0 0 1 2 2.4l-1.3 6A2 2 0 0 1 17.2 20H7" />
  </>
);

const SHAPES: Record<IconName, ReactNode> = {
  thumbUp: THUMB,
  thumbDown: <g transform="rotate(180 12 12)">{THUMB}</g>,
  pin: (
    <>
      <path d="M12 16v6" />
      <path d="M9 3h6l-1 6 3 3v3H7v-3l3-3z" />
    </>
  ),
  memory: (
    <>
      <path d="M9 18h6M10 21h4" />
      <path d="M12 3a6 6 0 0 0-4 10.5c.7.7 1 1.5 1 2.5h6c0-1 .3-1.8 1-2.5A6 6 0 0 0 12 3z" />
    </>
  ),
  folder: <path d="M3 6a1 1 0 0 1 1-1h5l2 2h9a1 1 0 0 1 1 1v10a1 1 0 0 1-1 1H4a1 1 0 0 1-1-1z" />,
  thread: (
    <>
      <path d="M4 5h16v11H10l-4 4v-4H4z" />
      <path d="M8 9h8M8 12h5" />
    </>
  ),
};

/** A decorative icon (hidden from screen readers: the control around it carries the name). */
export function Icon({ name }: { name: IconName }) {
  return (
    <svg
      className={`icon icon-${name}`}
      viewBox="0 0 24 24"
      width="1em"
      height="1em"
      fill="none"
      stroke="currentColor"
      strokeWidth="2"
      strokeLinecap="round"
      strokeLinejoin="round"
      aria-hidden="true"
      focusable="false"
    >
      {SHAPES[name]}
    </svg>
  );
}
