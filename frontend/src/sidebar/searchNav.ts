// Keyboard use of the search dialog's results (a combobox over a listbox): every hit in the order
// shown, and where the arrow keys move the highlight.
import type { SearchResult } from "../api/types";

export interface SearchOption {
  /** The option's DOM id (aria-activedescendant points at it). */
  id: string;
  /** Where choosing it goes. */
  path: string;
}

/** Title hits first, then message hits: the order the dialog shows them. */
export function searchOptions(data: SearchResult | undefined, prefix = "search-opt"): SearchOption[] {
  if (!data) return [];
  return [
    ...data.conversations.map((c) => ({ id: `${prefix}-c-${c.id}`, path: `/c/${c.id}` })),
    ...data.messages.map((m) => ({
      id: `${prefix}-m-${m.id}`,
      path: `/c/${m.conversation_id}?m=${m.id}`,
    })),
  ];
}

/**
 * The highlighted index after an arrow key: down from none is the first, up from none the last,
 * and both wrap around. -1 (none) when there is nothing to highlight.
 */
export function moveActive(active: number, count: number, key: "ArrowDown" | "ArrowUp"): number {
  if (count <= 0) return -1;
  if (active < 0 || active >= count) return key === "ArrowDown" ? 0 : count - 1;
  return key === "ArrowDown" ? (active + 1) % count : (active - 1 + count) % count;
}
