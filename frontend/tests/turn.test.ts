import { describe, expect, it } from "vitest";
import { applyEvent, driveTurn, initialTurn, SendFailed, type TurnState } from "../src/stream/turn";
import { displayOf } from "../src/stream/display";
import type { Message } from "../src/api/types";

const frame = (id: number | null, event: string, data: unknown) =>
  `${id !== null ? `id: ${id}\n` : ""}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

function sseResponse(frames: string[], { close = true } = {}): Response {
  const enc = new TextEncoder();
  const queue = [...frames];
  const stream = new ReadableStream<Uint8Array>({
    pull(c) {
      const f = queue.shift();
      if (f !== undefined) c.enqueue(enc.encode(f));
      else if (close) c.close();
      else c.error(new TypeError("network error")); // the connection drops after the frames
    },
  });
  return new Response(stream, { status: 200, headers: { "Content-Type": "text/event-stream" } });
}

const noSleep = async () => undefined;

describe("applyEvent", () => {
  it("accumulates text and thinking and ends on done", () => {
    let s = initialTurn("c1");
    s = applyEvent(s, { id: 1, event: "message_start", data: { assistant_message_id: "a1", user_message_id: "u1" } });
    s = applyEvent(s, { id: 2, event: "thinking_delta", data: { text: "hmm" } });
    s = applyEvent(s, { id: 3, event: "text_delta", data: { text: "Hi" } });
    s = applyEvent(s, { id: 4, event: "text_delta", data: { text: " there" } });
    expect(s).toMatchObject({ messageId: "a1", userMessageId: "u1", text: "Hi there", thinking: "hmm", phase: "streaming", lastEventId: 4 });
    s = applyEvent(s, { id: 6, event: "done", data: { stop_reason: "end_turn" } });
    expect(s.phase).toBe("done");
  });

  it("ignores events it has already applied (a replay never duplicates text)", () => {
    let s = initialTurn("c1", "a1", { lastEventId: 3, text: "abc", thinking: "" });
    s = applyEvent(s, { id: 2, event: "text_delta", data: { text: "b" } });
    s = applyEvent(s, { id: 3, event: "text_delta", data: { text: "c" } });
    s = applyEvent(s, { id: 4, event: "text_delta", data: { text: "d" } });
    expect(s.text).toBe("abcd");
  });

  it("tells stopped, interrupted and error apart", () => {
    const base = initialTurn("c1", "a1");
    expect(applyEvent(base, { id: 2, event: "done", data: { stop_reason: "stopped" } }).phase).toBe("stopped");
    const i = applyEvent(base, { id: 2, event: "error", data: { code: "generation_interrupted", message: "x" } });
    expect(i.phase).toBe("interrupted");
    const e = applyEvent(base, { id: 2, event: "error", data: { code: "rate_limited", message: "slow down" } });
    expect(e).toMatchObject({ phase: "error", error: { code: "rate_limited", message: "slow down" } });
  });

  it("a snapshot replaces the text with the stored message", () => {
    let s = initialTurn("c1", "a1", { lastEventId: 9, text: "partial", thinking: "" });
    s = applyEvent(s, {
      id: null,
      event: "snapshot",
      data: { message: { id: "a1", blocks: [{ kind: "thinking", text: "t" }, { kind: "text", text: "full answer" }] } },
    });
    expect(s.text).toBe("full answer");
    expect(s.thinking).toBe("t");
    expect(s.lastEventId).toBe(9);
  });
});

describe("driveTurn", () => {
  it("resumes after the last event id when the connection drops, without duplicates", async () => {
    const follows: number[] = [];
    const states: TurnState[] = [];
    const final = await driveTurn(initialTurn("c1"), {
      start: async () =>
        sseResponse(
          [frame(1, "message_start", { assistant_message_id: "a1" }), frame(2, "text_delta", { text: "Hel" })],
          { close: false },
        ),
      follow: async (mid, after) => {
        follows.push(after);
        expect(mid).toBe("a1");
        // the server replays from `after`; an overlapping frame must be ignored
        return sseResponse([
          frame(2, "text_delta", { text: "Hel" }),
          frame(3, "text_delta", { text: "lo" }),
          frame(4, "done", { stop_reason: "end_turn" }),
        ]);
      },
      onState: (s) => states.push(s),
      signal: new AbortController().signal,
      sleep: noSleep,
    });
    expect(follows).toEqual([2]);
    expect(final.text).toBe("Hello");
    expect(final.phase).toBe("done");
    expect(states.some((s) => s.phase === "reconnecting")).toBe(true);
  });

  it("keeps retrying while the server is away (network errors, 502)", async () => {
    let n = 0;
    const final = await driveTurn(initialTurn("c1", "a1", { lastEventId: 5, text: "so far", thinking: "" }), {
      follow: async (_mid, after) => {
        n += 1;
        if (n === 1) throw new TypeError("Failed to fetch");
        if (n === 2) return new Response("bad gateway", { status: 502 });
        expect(after).toBe(5);
        return sseResponse([frame(6, "text_delta", { text: "!" }), frame(7, "error", { code: "generation_interrupted", message: "m" })]);
      },
      onState: () => undefined,
      signal: new AbortController().signal,
      sleep: noSleep,
    });
    expect(n).toBe(3);
    expect(final.text).toBe("so far!");
    expect(final.phase).toBe("interrupted");
  });

  it("a refused send throws SendFailed with the server's error (the caller keeps the text)", async () => {
    const res = new Response(JSON.stringify({ error: { code: "too_many_turns", message: "3 running" } }), {
      status: 429,
      headers: { "Content-Type": "application/json" },
    });
    await expect(
      driveTurn(initialTurn("c1"), {
        start: async () => res,
        follow: async () => {
          throw new Error("not reached");
        },
        onState: () => undefined,
        signal: new AbortController().signal,
      }),
    ).rejects.toSatisfy((e: unknown) => e instanceof SendFailed && e.error.status === 429 && e.error.code === "too_many_turns");
  });

  it("stops quietly when aborted", async () => {
    const ac = new AbortController();
    const p = driveTurn(initialTurn("c1", "a1"), {
      follow: async () => {
        ac.abort();
        throw new TypeError("aborted");
      },
      onState: () => undefined,
      signal: ac.signal,
      sleep: noSleep,
    });
    await expect(p).resolves.toMatchObject({ phase: "connecting" });
  });
});

describe("displayOf", () => {
  const row = (over: Partial<Message>): Message => ({
    id: "a1", conversation_id: "c1", parent_id: "u1", role: "assistant", blocks: [], text: "", status: "complete",
    stop_reason: "end_turn", error: "", model_id: "demo", model_label: "Demo", created_at: 0,
    branch_index: 0, branch_count: 1, sibling_ids: ["a1"], ...over,
  }) as Message;

  it("shows the stored row's state in words", () => {
    expect(displayOf(row({ stop_reason: "stopped" })).phase).toBe("stopped");
    expect(displayOf(row({ status: "error", error: "generation_interrupted" })).phase).toBe("interrupted");
    const e = displayOf(row({ status: "error", error: "boom", blocks: [{ kind: "error", code: "upstream_error", text: "provider said no" }] }));
    expect(e).toMatchObject({ phase: "error", error: { code: "upstream_error", message: "provider said no" } });
  });

  it("prefers the live stream while the row is streaming, and the row once it ended", () => {
    const live = { ...initialTurn("c1", "a1"), text: "live text", lastEventId: 4, phase: "streaming" as const };
    expect(displayOf(row({ status: "streaming", text: "stale" }), live).text).toBe("live text");
    expect(displayOf(row({ status: "complete", text: "final" }), live).text).toBe("final");
    // nothing received yet: the stored partial text stays on screen (no flash of empty)
    expect(displayOf(row({ status: "streaming", text: "partial" }), initialTurn("c1", "a1")).text).toBe("partial");
  });
});
