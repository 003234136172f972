// The active path of a conversation as the client holds it (pure): pages of messages, oldest
// first, merged as older pages load; branch navigation from each message's sibling ids.
import type { Message } from "../api/types";

/** Prepend an older page to the loaded messages (a message already loaded is kept once). */
export function mergeOlder(loaded: Message[], older: Message[]): Message[] {
  const seen = new Set(loaded.map((m) => m.id));
  return [...older.filter((m) => !seen.has(m.id)), ...loaded];
}

/** Replace messages by id (a stop or an edit answers with the new rows). */
export function replaceMessages(loaded: Message[], rows: Message[]): Message[] {
  const byId = new Map(rows.map((m) => [m.id, m]));
  return loaded.map((m) => byId.get(m.id) ?? m);
}

export interface BranchNav {
  index: number;
  count: number;
  label: string;
  prev: string | null;
  next: string | null;
}

/** Where a message stands among its siblings ("2/3") and the ids one step either way. */
export function branchNav(m: Pick<Message, "branch_index" | "branch_count" | "sibling_ids">): BranchNav | null {
  const count = m.branch_count || 1;
  if (count < 2) return null;
  const index = Math.min(Math.max(m.branch_index || 0, 0), count - 1);
  return {
    index,
    count,
    label: `${index + 1}/${count}`,
    prev: index > 0 ? m.sibling_ids[index - 1] ?? null : null,
    next: index < count - 1 ? m.sibling_ids[index + 1] ?? null : null,
  };
}

/** The user message a regenerate of `m` answers (an assistant's parent), or null. */
export function questionOf(path: Message[], m: Message): Message | null {
  if (m.role !== "assistant" || !m.parent_id) return null;
  return path.find((x) => x.id === m.parent_id) ?? null;
}

/** Whether any message of the path is still being generated. */
export function streamingIn(path: Message[]): Message | undefined {
  return path.find((m) => m.status === "streaming");
}

/** The text to quote for an inline thread: the selection, trimmed, within the server's limit. */
export const QUOTE_MAX = 4000;
export function quoteFrom(selection: string): string | null {
  const q = selection.replace(/\s+/g, " ").trim();
  if (!q) return null;
  return q.length > QUOTE_MAX ? q.slice(0, QUOTE_MAX) : q;
}
