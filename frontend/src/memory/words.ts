// How the library names a memory's machine fields for a person: statuses in words, dates,
// importance and confidence. Pure (no React), so it is easy to test.
import type { MessageKey } from "../i18n/en";

export const STATUSES = ["ACTIVE", "QUERY_DEPENDENT", "UNKNOWN_CURRENT", "STALE", "DISABLED"] as const;

export function statusKey(status: string): MessageKey {
  switch (status) {
    case "ACTIVE":
      return "memActive";
    case "QUERY_DEPENDENT":
      return "memQueryDependent";
    case "UNKNOWN_CURRENT":
      return "memUnknownCurrent";
    case "STALE":
      return "memStale";
    case "DISABLED":
      return "memDisabled";
    default:
      return "memDeleted";
  }
}

/** A day (yyyy-mm-dd) from epoch milliseconds, or "" for none. */
export function day(ms: number | null | undefined): string {
  if (ms == null) return "";
  return new Date(ms).toISOString().slice(0, 10);
}

/** Epoch milliseconds of the start of a yyyy-mm-dd day (UTC), or null for "". */
export function fromDay(s: string): number | null {
  if (!s) return null;
  const ms = Date.parse(`${s}T00:00:00Z`);
  return Number.isNaN(ms) ? null : ms;
}

export function percent(x: number): string {
  return `${Math.round(x * 100)}%`;
}

/** Memories grouped into UNKNOWN_CURRENT conflicts: several undecided values of one slot. */
export function conflicts<M extends { status: string; slot: string; agent_id?: string | null }>(
  items: M[],
): M[][] {
  const by = new Map<string, M[]>();
  for (const m of items) {
    if (m.status !== "UNKNOWN_CURRENT" || !m.slot) continue;
    const k = `${m.agent_id ?? ""}\u0000${m.slot}`;
    by.set(k, [...(by.get(k) ?? []), m]);
  }
  return [...by.values()].filter((g) => g.length > 1);
}
