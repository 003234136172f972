import { describe, expect, it } from "vitest";
import { readSse } from "../src/stream/sse";

function body(chunks: string[]): ReadableStream<Uint8Array> {
  const enc = new TextEncoder();
  return new ReadableStream({
    start(c) {
      for (const ch of chunks) c.enqueue(enc.encode(ch));
      c.close();
    },
  });
}

async function all(chunks: string[]) {
  const out = [];
  for await (const ev of readSse(body(chunks))) out.push(ev);
  return out;
}

describe("readSse", () => {
  it("parses numbered JSON frames split across chunks, skipping pings", async () => {
    const evs = await all([
      'id: 1\nevent: message_start\ndata: {"assistant_message_id":"m1"}\n\n: ping\n\nid: 2\nev',
      'ent: text_delta\ndata: {"text":"Hel',
      'lo"}\n\n',
      'event: snapshot\r\ndata: {"message":{"id":"m1"}}\r\n\r\n',
    ]);
    expect(evs).toEqual([
      { id: 1, event: "message_start", data: { assistant_message_id: "m1" } },
      { id: 2, event: "text_delta", data: { text: "Hello" } },
      { id: null, event: "snapshot", data: { message: { id: "m1" } } },
    ]);
  });

  it("keeps non-JSON data as text and multi-line data joined", async () => {
    const evs = await all(["data: a\ndata: b\n\n"]);
    expect(evs).toEqual([{ id: null, event: "message", data: "a\nb" }]);
  });

  it("splits multi-byte characters across chunks correctly", async () => {
    const enc = new TextEncoder();
    const bytes = enc.encode('id: 1\nevent: text_delta\ndata: {"text":"你好"}\n\n');
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(bytes.slice(0, 40));
        c.enqueue(bytes.slice(40));
        c.close();
      },
    });
    const out = [];
    for await (const ev of readSse(stream)) out.push(ev);
    expect(out[0].data).toEqual({ text: "你好" });
  });
});
