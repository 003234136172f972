// The active path of one conversation as a hook: the newest page first, older pages on demand,
// refresh after a turn or an edit, and "find this message" for links from search.
import { useCallback, useEffect, useRef, useState } from "react";
import { ApiError } from "../api/client";
import { api } from "../api/endpoints";
import type { Message } from "../api/types";
import { mergeOlder } from "../tree/path";

export const PAGE_SIZE = 50;

export type LoadState = "loading" | "ready" | "notfound" | "error";

export function useThread(cid: string | undefined) {
  const [items, setItems] = useState<Message[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [state, setState] = useState<LoadState>("loading");
  const [loadingOlder, setLoadingOlder] = useState(false);
  const current = useRef(cid);
  current.current = cid;
  const itemsRef = useRef(items);
  itemsRef.current = items;
  const cursorRef = useRef(cursor);
  cursorRef.current = cursor;
  // answers to superseded requests are dropped: the newest load wins, and a reload (the path
  // changed shape) voids older pages still on their way
  const lastLoad = useRef(0);
  const generation = useRef(0);

  /**
   * Fetch the newest page. `keepOlder` keeps older pages already loaded when the path still
   * starts the same way (after a turn: only the end of the path changed); a structural change
   * (branch switch, deleted round) reloads from the newest page.
   */
  const load = useCallback(
    async (keepOlder: boolean) => {
      if (!cid) return;
      const mine = ++lastLoad.current;
      if (!keepOlder) generation.current += 1;
      try {
        const page = await api.messages(cid, { limit: PAGE_SIZE });
        if (current.current !== cid || mine !== lastLoad.current) return;
        const first = page.items[0];
        const old = itemsRef.current;
        const at = keepOlder && first && page.next_cursor ? old.findIndex((m) => m.id === first.id) : -1;
        const items = at > 0 ? [...old.slice(0, at), ...page.items] : page.items;
        itemsRef.current = items;
        setItems(items);
        if (at <= 0) {
          cursorRef.current = page.next_cursor ?? null;
          setCursor(page.next_cursor ?? null);
        }
        setState("ready");
      } catch (e) {
        if (current.current !== cid || mine !== lastLoad.current) return;
        setState(e instanceof ApiError && e.status === 404 ? "notfound" : "error");
      }
    },
    [cid],
  );
  const refresh = useCallback(() => load(true), [load]);
  const reload = useCallback(() => load(false), [load]);

  useEffect(() => {
    setItems([]);
    setCursor(null);
    setState(cid ? "loading" : "ready");
    reload();
  }, [cid, reload]);

  const loadOlder = useCallback(async (): Promise<Message[]> => {
    const before = cursorRef.current;
    if (!cid || !before) return [];
    setLoadingOlder(true);
    const gen = generation.current;
    try {
      const page = await api.messages(cid, { before, limit: PAGE_SIZE });
      if (current.current !== cid || gen !== generation.current) return [];
      const merged = mergeOlder(itemsRef.current, page.items);
      itemsRef.current = merged;
      cursorRef.current = page.next_cursor ?? null;
      setItems(merged);
      setCursor(page.next_cursor ?? null);
      return page.items;
    } finally {
      setLoadingOlder(false);
    }
  }, [cid]);

  /** Make `mid` visible: page back until it is loaded; if it is on another branch, switch to it. */
  const reveal = useCallback(
    async (mid: string): Promise<boolean> => {
      if (!cid) return false;
      for (let i = 0; i < 100; i++) {
        if (itemsRef.current.some((m) => m.id === mid)) return true;
        if (!cursorRef.current) break;
        await loadOlder();
      }
      if (itemsRef.current.some((m) => m.id === mid)) return true;
      try {
        await api.switchLeaf(cid, mid);
      } catch {
        return false;
      }
      const page = await api.messages(cid, { limit: PAGE_SIZE });
      itemsRef.current = page.items;
      cursorRef.current = page.next_cursor ?? null;
      setItems(page.items);
      setCursor(page.next_cursor ?? null);
      for (let i = 0; i < 100 && !itemsRef.current.some((m) => m.id === mid) && cursorRef.current; i++) {
        await loadOlder();
      }
      return itemsRef.current.some((m) => m.id === mid);
    },
    [cid, loadOlder],
  );

  return { items, setItems, cursor, state, loadingOlder, refresh, reload, loadOlder, reveal };
}
