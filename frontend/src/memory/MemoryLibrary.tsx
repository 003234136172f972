// The memory library (/memories): every memory the assistant keeps about the user, filterable by
// status, type, companion and text; add, edit, disable/enable, delete with undo, purge, history,
// UNKNOWN_CURRENT conflicts side by side, and the switch that turns memory off.
import { useInfiniteQuery, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "react";
import { useSearchParams } from "react-router";
import { ApiError } from "../api/client";
import { api } from "../api/endpoints";
import { lib, type Memory } from "../api/library";
import { useApp } from "../app/context";
import { TopBar } from "../chat/TopBar";
import { errorText, useT } from "../i18n";
import { keys } from "../queries";
import { ConfirmDialog } from "../ui/Dialog";
import { toast } from "../ui/toast";
import { ConflictView } from "./ConflictView";
import { HistoryDialog } from "./HistoryDialog";
import { MemoryCard } from "./MemoryCard";
import { MemoryEditor } from "./MemoryEditor";
import { conflicts, STATUSES, statusKey } from "./words";

const UNDO_MS = 6000;

interface Filter {
  status: string;
  type: string;
  agent: string;
  q: string;
}

export function useAgents() {
  return useQuery({
    queryKey: ["agents"],
    queryFn: async () => (await lib.agents()).items,
    staleTime: 30_000,
  });
}

export function MemoryLibrary() {
  const t = useT();
  const qc = useQueryClient();
  const { me } = useApp();
  const [params] = useSearchParams(); // ?agent= from a companion's "Memories"
  const [filter, setFilter] = useState<Filter>({ status: "", type: "", agent: params.get("agent") ?? "", q: "" });
  const [q, setQ] = useState("");
  const [editing, setEditing] = useState<Memory | null | undefined>(undefined);
  const [history, setHistory] = useState<Memory | null>(null);
  const [purging, setPurging] = useState<Memory | null>(null);
  const [pending, setPending] = useState<Memory | null>(null);
  const timer = useRef<number | null>(null);
  const agents = useAgents();
  const agentList = (agents.data ?? []).map((a) => ({ id: a.id, name: a.name }));
  const agentName = (id: string) => agentList.find((a) => a.id === id)?.name ?? id;

  useEffect(() => {
    const h = setTimeout(() => setFilter((f) => ({ ...f, q })), 250);
    return () => clearTimeout(h);
  }, [q]);

  const list = useInfiniteQuery({
    queryKey: ["memories", filter],
    queryFn: ({ pageParam }) =>
      lib.memories({
        ...(filter.status ? { status: [filter.status] } : {}),
        ...(filter.type ? { type: filter.type } : {}),
        ...(filter.agent ? { agent_id: filter.agent } : {}),
        ...(filter.q ? { q: filter.q } : {}),
        limit: 100,
        cursor: pageParam ?? undefined,
      }),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.next_cursor,
  });
  const items = (list.data?.pages ?? []).flatMap((p) => p.items).filter((m) => m.id !== pending?.id);
  const groups = conflicts(items);
  const refresh = () => qc.invalidateQueries({ queryKey: ["memories"] });
  const fail = (e: unknown) =>
    toast(e instanceof ApiError ? errorText(t, e.code, e.message) : String(e), "error");

  // a delete waits UNDO_MS for "Undo" before it reaches the server; leaving the page commits it
  const commit = async (m: Memory) => {
    try {
      await lib.deleteMemory(m.id);
    } catch (e) {
      fail(e);
    }
    refresh();
  };
  const pendingRef = useRef<Memory | null>(null);
  pendingRef.current = pending;
  useEffect(
    () => () => {
      if (timer.current) clearTimeout(timer.current);
      if (pendingRef.current) void lib.deleteMemory(pendingRef.current.id).catch(() => undefined);
    },
    [],
  );
  const remove = (m: Memory) => {
    if (timer.current) clearTimeout(timer.current);
    if (pending) void commit(pending);
    setPending(m);
    timer.current = window.setTimeout(() => {
      setPending(null);
      timer.current = null;
      void commit(m);
    }, UNDO_MS);
  };
  const undo = () => {
    if (timer.current) clearTimeout(timer.current);
    timer.current = null;
    setPending(null);
  };

  const act = async (f: () => Promise<unknown>) => {
    try {
      await f();
    } catch (e) {
      fail(e);
    }
    refresh();
  };
  const actions = {
    edit: (m: Memory) => setEditing(m),
    toggle: (m: Memory) =>
      act(() => lib.patchMemory(m.id, { status: m.status === "DISABLED" ? "ACTIVE" : "DISABLED" })),
    remove,
    purge: (m: Memory) => setPurging(m),
    history: (m: Memory) => setHistory(m),
  };

  // the switch moves at once; it moves back if the server refuses
  const [memoryOn, setOn] = useState(me.settings.memory_enabled);
  const setMemoryOn = async (on: boolean) => {
    setOn(on);
    try {
      qc.setQueryData(keys.me, await api.patchMe({ memory_enabled: on }));
    } catch (e) {
      setOn(!on);
      fail(e);
    }
  };

  return (
    <div className="page">
      <TopBar title={t("memoryLibrary")}>
        <button type="button" className="primary" onClick={() => setEditing(null)}>
          {t("memAdd")}
        </button>
      </TopBar>
      <div className="page-body library">
        <label className="switch-row">
          <input type="checkbox" role="switch" checked={memoryOn} onChange={(e) => setMemoryOn(e.target.checked)} />
          <span>{t("memorySwitch")}</span>
        </label>
        {!memoryOn && <p className="notice">{t("memoryOffNotice")}</p>}
        <div className="mem-filters" role="search">
          <label>
            <span className="sr-only">{t("memFilterText")}</span>
            <input type="search" placeholder={t("memFilterText")} value={q} onChange={(e) => setQ(e.target.value)} />
          </label>
          <label>
            <span className="sr-only">{t("memStatus")}</span>
            <select value={filter.status} onChange={(e) => setFilter({ ...filter, status: e.target.value })}>
              <option value="">{t("memAnyStatus")}</option>
              {STATUSES.map((s) => (
                <option key={s} value={s}>
                  {t(statusKey(s))}
                </option>
              ))}
            </select>
          </label>
          <label>
            <span className="sr-only">{t("memType")}</span>
            <input
              placeholder={t("memType")}
              value={filter.type}
              maxLength={80}
              onChange={(e) => setFilter({ ...filter, type: e.target.value })}
            />
          </label>
          <label>
            <span className="sr-only">{t("memScope")}</span>
            <select value={filter.agent} onChange={(e) => setFilter({ ...filter, agent: e.target.value })}>
              <option value="">{t("memAnyScope")}</option>
              <option value="none">{t("memUserWide")}</option>
              {agentList.map((a) => (
                <option key={a.id} value={a.id}>
                  {a.name}
                </option>
              ))}
            </select>
          </label>
        </div>
        {groups.map((g) => (
          <ConflictView
            key={g[0].id}
            group={g}
            edit={(m) => setEditing(m)}
            keepOne={(m) => act(() => lib.patchMemory(m.id, { status: "ACTIVE", reason: "kept by the user" }))}
            keepAll={(all) =>
              act(async () => {
                for (const m of all.slice(1)) await lib.patchMemory(m.id, { slot: "", status: "ACTIVE" });
                await lib.patchMemory(all[0].id, { status: "ACTIVE" });
              })
            }
          />
        ))}
        {list.isPending && <p className="muted">…</p>}
        {list.isSuccess && items.length === 0 && <p className="muted">{t("memNone")}</p>}
        <ul className="mem-list" aria-label={t("memoryLibrary")}>
          {items.map((m) => (
            <MemoryCard key={m.id} m={m} agentName={agentName} actions={actions} />
          ))}
        </ul>
        {list.hasNextPage && (
          <button type="button" onClick={() => list.fetchNextPage()}>
            {t("loadMore")}
          </button>
        )}
      </div>
      {pending && (
        <div className="undo-bar" role="status">
          <span>{t("memDeletedNotice")}</span>
          <button type="button" onClick={undo}>
            {t("undo")}
          </button>
        </div>
      )}
      {editing !== undefined && (
        <MemoryEditor
          open
          memory={editing}
          agents={agentList}
          onClose={() => setEditing(undefined)}
          onSaved={() => {
            toast(t("saved"));
            refresh();
          }}
        />
      )}
      <HistoryDialog memory={history} onClose={() => setHistory(null)} />
      <ConfirmDialog
        open={!!purging}
        title={t("memPurgeTitle")}
        body={t("memPurgeBody")}
        confirm={t("memPurge")}
        onClose={() => setPurging(null)}
        onConfirm={() => purging && act(() => lib.deleteMemory(purging.id, true))}
      />
    </div>
  );
}
