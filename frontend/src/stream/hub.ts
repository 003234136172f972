// The answers being generated in this tab, keyed by conversation and message, outside React so a
// stream keeps running (and its conversation keeps its Stop button) while the user looks at another
// chat. Progress is saved in sessionStorage, so a reload resumes after the last event id instead of
// replaying text it already shows.
import { rawFetch } from "../api/client";
import { streamPath, turnRequest } from "../api/endpoints";
import { driveTurn, initialTurn, isTerminal, type TurnState } from "./turn";

const SAVE_PREFIX = "chatmem.turn.";

interface Saved {
  lastEventId: number;
  text: string;
  thinking: string;
}

export interface Turn {
  key: string;
  state: TurnState;
  abort: AbortController;
  /** Resolves when the turn ends; rejects with SendFailed when the send was refused. */
  done: Promise<TurnState>;
  /** Resolves once the server has accepted the turn (its message ids are known). */
  started: Promise<void>;
}

type Listener = () => void;
type Ended = (s: TurnState) => void;

function load(mid: string): Saved | undefined {
  try {
    const raw = sessionStorage.getItem(SAVE_PREFIX + mid);
    return raw ? (JSON.parse(raw) as Saved) : undefined;
  } catch {
    return undefined;
  }
}

function save(s: TurnState): void {
  if (!s.messageId) return;
  try {
    if (isTerminal(s.phase)) sessionStorage.removeItem(SAVE_PREFIX + s.messageId);
    else
      sessionStorage.setItem(
        SAVE_PREFIX + s.messageId,
        JSON.stringify({ lastEventId: s.lastEventId, text: s.text, thinking: s.thinking }),
      );
  } catch {
    /* storage full or disabled: a reload then replays from the start */
  }
}

const follow = (cid: string) => (mid: string, after: number) =>
  rawFetch(streamPath(cid, mid, after), { headers: { Accept: "text/event-stream" } });

export class StreamHub {
  private turns = new Map<string, Turn>();
  private listeners = new Set<Listener>();
  private ended = new Set<Ended>();
  private version = 0;
  private saveTimers = new Map<string, number>();

  subscribe = (fn: Listener): (() => void) => {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  };

  getVersion = () => this.version;

  /** Called with the final state of every turn that ends (to refresh lists and titles). */
  onEnded(fn: Ended): () => void {
    this.ended.add(fn);
    return () => this.ended.delete(fn);
  }

  private emit() {
    this.version += 1;
    this.listeners.forEach((fn) => fn());
  }

  /** The live turn of a message, if this tab is reading one. */
  forMessage(mid: string): Turn | undefined {
    for (const t of this.turns.values()) if (t.state.messageId === mid) return t;
    return undefined;
  }

  /** Turns of a conversation that have not ended (including a send whose ids are not known yet). */
  activeIn(cid: string): Turn[] {
    return [...this.turns.values()].filter(
      (t) => t.state.conversationId === cid && !isTerminal(t.state.phase),
    );
  }

  private run(key: string, initial: TurnState, start?: () => Promise<Response>): Turn {
    const abort = new AbortController();
    let accepted: () => void = () => undefined;
    let refused: (e: unknown) => void = () => undefined;
    const started = new Promise<void>((res, rej) => {
      accepted = res;
      refused = rej;
    });
    started.catch(() => undefined); // observed through `done` as well
    const turn: Turn = { key, state: initial, abort, done: Promise.resolve(initial), started };
    this.turns.set(key, turn);
    if (initial.messageId) accepted();
    const onState = (s: TurnState) => {
      turn.state = s;
      if (s.messageId) accepted();
      this.scheduleSave(s);
      this.emit();
    };
    turn.done = driveTurn(initial, {
      start,
      follow: follow(initial.conversationId),
      onState,
      signal: abort.signal,
    }).then(
      (s) => {
        accepted();
        save(s);
        this.emit();
        if (!abort.signal.aborted) this.ended.forEach((fn) => fn(s));
        return s;
      },
      (e) => {
        refused(e);
        this.turns.delete(key);
        this.emit();
        throw e;
      },
    );
    this.emit();
    return turn;
  }

  private scheduleSave(s: TurnState) {
    const mid = s.messageId;
    if (!mid) return;
    if (isTerminal(s.phase)) {
      save(s);
      return;
    }
    if (this.saveTimers.has(mid)) return;
    this.saveTimers.set(
      mid,
      window.setTimeout(() => {
        this.saveTimers.delete(mid);
        const t = this.forMessage(mid);
        if (t) save(t.state);
      }, 200),
    );
  }

  /** Start a turn (send or regenerate); resolves when it ends, rejects with SendFailed. */
  start(cid: string, kind: "send" | "regenerate", body: Record<string, unknown>): Turn {
    const { path, init } = turnRequest(cid, kind, body);
    const key = `start:${cid}:${Date.now()}:${Math.random()}`;
    return this.run(key, initialTurn(cid), () => rawFetch(path, init));
  }

  /** Follow a streaming message (after a reload, in another tab, after switching back). */
  follow(cid: string, mid: string): Turn {
    const existing = this.forMessage(mid);
    if (existing && !existing.abort.signal.aborted) return existing;
    return this.run(`follow:${mid}`, initialTurn(cid, mid, load(mid)));
  }

  /** Forget a finished turn once the message list shows its final row. */
  release(mid: string): void {
    for (const [k, t] of this.turns) {
      if (t.state.messageId === mid && isTerminal(t.state.phase)) this.turns.delete(k);
    }
    this.emit();
  }

  /** Stop reading (the server keeps generating). */
  detach(mid: string): void {
    for (const [k, t] of this.turns) {
      if (t.state.messageId === mid) {
        t.abort.abort();
        this.turns.delete(k);
      }
    }
    this.emit();
  }
}

export const hub = new StreamHub();
