// One answer being generated, as the client sees it: a pure reducer over the SSE events of the
// native API, plus the driver that reads a stream and, when the connection drops, resumes it from
// the last event id (so no text is ever applied twice).
import { ApiError, errorFrom } from "../api/client";
import type { Block, Message } from "../api/types";
import { readSse, type SseEvent } from "./sse";

export type Phase =
  | "connecting"
  | "streaming"
  | "reconnecting"
  | "done"
  | "stopped"
  | "interrupted"
  | "error";

export const TERMINAL: readonly Phase[] = ["done", "stopped", "interrupted", "error"];

export interface TurnState {
  conversationId: string;
  messageId: string | null;
  userMessageId: string | null;
  /** The sequence number of the last event applied (0 = none). */
  lastEventId: number;
  text: string;
  thinking: string;
  phase: Phase;
  error: { code: string; message: string } | null;
  stopReason: string | null;
  /** The final message when the server sent one (snapshot / done). */
  final: Message | null;
}

export function initialTurn(
  conversationId: string,
  messageId: string | null = null,
  resume?: Pick<TurnState, "lastEventId" | "text" | "thinking">,
): TurnState {
  return {
    conversationId,
    messageId,
    userMessageId: null,
    lastEventId: resume?.lastEventId ?? 0,
    text: resume?.text ?? "",
    thinking: resume?.thinking ?? "",
    phase: "connecting",
    error: null,
    stopReason: null,
    final: null,
  };
}

export const isTerminal = (p: Phase) => TERMINAL.includes(p);

function textOf(blocks: Block[] | undefined, kind: string): string {
  return (blocks || [])
    .filter((b) => b.kind === kind)
    .map((b) => b.text || "")
    .join("");
}

type Data = Record<string, unknown>;

/** Apply one event (pure). Numbered events at or below `lastEventId` were applied already. */
export function applyEvent(s: TurnState, ev: SseEvent): TurnState {
  if (ev.id !== null && ev.id <= s.lastEventId) return s;
  const d = (ev.data && typeof ev.data === "object" ? ev.data : {}) as Data;
  const next: TurnState = { ...s, lastEventId: ev.id ?? s.lastEventId };
  if (!isTerminal(s.phase)) next.phase = "streaming";
  switch (ev.event) {
    case "message_start":
      next.messageId = (d.assistant_message_id as string) || s.messageId;
      next.userMessageId = (d.user_message_id as string) || s.userMessageId;
      break;
    case "text_delta":
      next.text = s.text + String(d.text ?? d.delta ?? "");
      break;
    case "thinking_delta":
      next.thinking = s.thinking + String(d.text ?? "");
      break;
    case "snapshot": {
      const m = d.message as Message | undefined;
      if (m) {
        next.text = textOf(m.blocks, "text");
        next.thinking = textOf(m.blocks, "thinking");
        next.final = m;
      }
      break;
    }
    case "error": {
      const code = String(d.code || "error");
      next.error = { code, message: String(d.message || code) };
      next.phase = code === "generation_interrupted" ? "interrupted" : "error";
      break;
    }
    case "done": {
      next.stopReason = (d.stop_reason as string) ?? null;
      next.phase = d.stop_reason === "stopped" ? "stopped" : "done";
      if (d.message) next.final = d.message as Message;
      break;
    }
    default:
      break; // usage, compaction, …: nothing to show in the text
  }
  return next;
}

export interface DriveOptions {
  /** Opens the first stream (a turn-starting POST). Without it the driver follows `messageId`. */
  start?: () => Promise<Response>;
  /** Opens `GET …/messages/{mid}/stream` after the given event id. */
  follow: (messageId: string, after: number) => Promise<Response>;
  onState: (s: TurnState) => void;
  signal: AbortSignal;
  /** Milliseconds to wait before reconnect attempt n (1-based). */
  backoff?: (attempt: number) => number;
  maxAttempts?: number;
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

export const defaultBackoff = (n: number) => Math.min(500 * 2 ** (n - 1), 5000);

function defaultSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(t);
      resolve();
    });
  });
}

/** The send failed before any answer started (413, 429, 409, …): the caller keeps the typed text. */
export class SendFailed extends Error {
  readonly error: ApiError;
  constructor(error: ApiError) {
    super(error.message);
    this.error = error;
  }
}

/**
 * Read a turn to its end. A dropped connection (body ends without `done`/`error`, or fetch
 * throws) becomes `reconnecting`, then the stream is reopened after `lastEventId`. Returns the
 * final state; throws SendFailed when the starting request itself was refused.
 */
export async function driveTurn(initial: TurnState, o: DriveOptions): Promise<TurnState> {
  let s = initial;
  const set = (n: TurnState) => {
    s = n;
    o.onState(s);
  };
  const backoff = o.backoff ?? defaultBackoff;
  const sleep = o.sleep ?? defaultSleep;
  const maxAttempts = o.maxAttempts ?? 60;
  let attempt = 0;
  let first = true;
  while (!o.signal.aborted) {
    let res: Response | null = null;
    try {
      if (first && o.start) {
        res = await o.start();
        if (!res.ok) throw new SendFailed(await errorFrom(res));
      } else if (s.messageId) {
        res = await o.follow(s.messageId, s.lastEventId);
        if (res.status === 404 || res.status === 400 || res.status === 403) {
          const e = await errorFrom(res);
          set({ ...s, phase: "error", error: { code: e.code, message: e.message } });
          return s;
        }
        if (!res.ok) res = null; // 5xx while a server restarts: retry
      } else {
        // the start stream broke before message_start: nothing to resume by id
        set({ ...s, phase: "error", error: { code: "connection_lost", message: "" } });
        return s;
      }
    } catch (e) {
      if (e instanceof SendFailed) throw e;
      if (o.signal.aborted) return s;
      if (first && o.start) {
        throw new SendFailed(new ApiError(0, "network_error", String(e)));
      }
      res = null;
    }
    first = false;
    if (res && res.body) {
      try {
        for await (const ev of readSse(res.body, o.signal)) {
          set(applyEvent(s, ev));
          attempt = 0;
          if (isTerminal(s.phase)) return s;
        }
      } catch {
        /* the connection dropped mid-body */
      }
    }
    if (o.signal.aborted) return s;
    attempt += 1;
    if (attempt > maxAttempts) {
      set({ ...s, phase: "error", error: { code: "connection_lost", message: "" } });
      return s;
    }
    set({ ...s, phase: "reconnecting" });
    await sleep(backoff(attempt), o.signal);
  }
  return s;
}
