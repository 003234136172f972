// Server-sent events over fetch (a POST can answer with a stream; EventSource cannot POST or send
// headers). Parsing is eventsource-parser's; this module turns a Response body into typed events.
import { createParser, type EventSourceMessage } from "eventsource-parser";

export interface SseEvent {
  /** The `id:` field (the event's sequence number), or null for unnumbered frames. */
  id: number | null;
  event: string;
  data: unknown;
}

export function toEvent(m: EventSourceMessage): SseEvent {
  let data: unknown = m.data;
  try {
    data = JSON.parse(m.data);
  } catch {
    /* keep the text */
  }
  const id = m.id !== undefined && m.id !== "" && !Number.isNaN(Number(m.id)) ? Number(m.id) : null;
  return { id, event: m.event || "message", data };
}

/** Yield the events of a text/event-stream body as they arrive; ends when the body ends. */
export async function* readSse(
  body: ReadableStream<Uint8Array>,
  signal?: AbortSignal,
): AsyncGenerator<SseEvent> {
  const queue: SseEvent[] = [];
  const parser = createParser({ onEvent: (m) => queue.push(toEvent(m)) });
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const onAbort = () => reader.cancel().catch(() => undefined);
  signal?.addEventListener("abort", onAbort);
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      parser.feed(decoder.decode(value, { stream: true }));
      while (queue.length) yield queue.shift()!;
    }
    parser.feed(decoder.decode());
    while (queue.length) yield queue.shift()!;
  } finally {
    signal?.removeEventListener("abort", onAbort);
    reader.releaseLock();
  }
}
