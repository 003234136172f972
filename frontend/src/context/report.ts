// Reading a context report (the server's ContextReport, with its extra keys) for the panel:
// sections as shares of the window, and the notable events in plain numbers. Pure.
export interface Section {
  name: string;
  tokens: number;
}

export interface Report {
  window?: number | null;
  limit?: number | null;
  reserved_output_tokens?: number | null;
  total_tokens?: number | null;
  sections?: Section[];
  memory_ids?: string[];
  summary_block_ids?: string[];
  recall_message_ids?: string[];
  message_ids?: string[];
  dropped_message_count?: number | null;
  truncated?: string[];
  compaction?: { ran?: boolean; needed?: boolean; [k: string]: unknown } | null;
  memory_error?: string | null;
  [k: string]: unknown;
}

export interface Bar {
  name: string;
  tokens: number;
  /** Share of the window (0–100), for the stacked bar. */
  pct: number;
}

/** The sections with tokens, as shares of the window (or of the total when no window is known). */
export function bars(r: Report): Bar[] {
  const base = r.window || r.limit || r.total_tokens || 1;
  return (r.sections ?? [])
    .filter((s) => s.tokens > 0)
    .map((s) => ({ name: s.name, tokens: s.tokens, pct: Math.min(100, (s.tokens / base) * 100) }));
}

const isList = (v: unknown) => v == null || Array.isArray(v);

/** The stored report of an assistant message (kept in its metadata), if any. A log-mode
 * message's metadata is its caller's: a `context` key of theirs that is not shaped like a report
 * (every report has its `sections` list; its id lists are lists) is no report. */
export function reportOf(metadata: unknown): Report | null {
  const c = (metadata as { context?: unknown } | null | undefined)?.context;
  if (!c || typeof c !== "object" || Array.isArray(c)) return null;
  const r = c as Report;
  const lists = [r.memory_ids, r.message_ids, r.summary_block_ids, r.recall_message_ids, r.truncated];
  return Array.isArray(r.sections) && lists.every(isList) ? r : null;
}
