// The inline threads of a conversation, grouped by the answer they are anchored to: one request
// per conversation (GET /inline-threads) feeds the "N threads" button of every answer.
import { useQuery, type QueryClient } from "@tanstack/react-query";
import { api } from "../api/endpoints";
import type { Conversation } from "../api/types";

export const threadsKey = (cid: string) => ["inline-threads", cid] as const;

/** A thread as the panel opens it. */
export interface ThreadRef {
  id: string;
  quote: string;
}

/** Threads by anchor message id, each list oldest first (the server's order is kept). */
export function threadsByMessage(items: readonly Conversation[]): Map<string, Conversation[]> {
  const out = new Map<string, Conversation[]>();
  for (const c of items) {
    if (!c.inline_parent_id) continue;
    const list = out.get(c.inline_parent_id);
    if (list) list.push(c);
    else out.set(c.inline_parent_id, [c]);
  }
  return out;
}

/** A quote shortened for a menu line: whitespace folded, cut at a word near `max` with "…". */
export function shortQuote(quote: string, max = 60): string {
  const q = quote.replace(/\s+/g, " ").trim();
  if (q.length <= max) return q;
  const cut = q.slice(0, max);
  const space = cut.lastIndexOf(" ");
  return `${(space > max * 0.6 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

export function useInlineThreads(cid: string | undefined) {
  return useQuery({
    queryKey: threadsKey(cid || ""),
    queryFn: async () => threadsByMessage((await api.threads(cid!)).items),
    enabled: !!cid,
    retry: false,
    staleTime: 30_000,
  });
}

export function threadsChanged(qc: QueryClient, cid: string) {
  qc.invalidateQueries({ queryKey: threadsKey(cid) });
}
