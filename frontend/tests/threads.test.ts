import { describe, expect, it } from "vitest";
import type { Conversation } from "../src/api/types";
import { findQuote } from "../src/chat/quoteMark";
import { shortQuote, threadsByMessage } from "../src/chat/threads";

const thread = (id: string, anchor: string, quote = id): Conversation =>
  ({ id, inline_parent_id: anchor, inline_quote: quote, inline_source_conv: "c" }) as Conversation;

describe("inline threads by anchor message", () => {
  it("groups a conversation's threads under their answers, keeping the server's order", () => {
    const by = threadsByMessage([thread("t1", "m1"), thread("t2", "m2"), thread("t3", "m1")]);
    expect([...by.keys()]).toEqual(["m1", "m2"]);
    expect(by.get("m1")!.map((c) => c.id)).toEqual(["t1", "t3"]);
    expect(by.get("m2")!.map((c) => c.id)).toEqual(["t2"]);
    expect(by.get("m3")).toBeUndefined();
  });

  it("skips a conversation that is not anchored anywhere", () => {
    expect(threadsByMessage([thread("t1", "")]).size).toBe(0);
    expect(threadsByMessage([]).size).toBe(0);
  });
});

describe("a quote shortened for a menu line", () => {
  it("keeps a short quote as it is, whitespace folded", () => {
    expect(shortQuote("  small\n crabs ")).toBe("small crabs");
  });

  it("cuts a long quote at a word and marks the cut", () => {
    const q = "Anemones, starfish and small crabs live in tide pools and cling to the rocks";
    const s = shortQuote(q, 40);
    expect(s.endsWith("…")).toBe(true);
    expect(s.length).toBeLessThanOrEqual(41);
    expect(q.startsWith(s.slice(0, -1))).toBe(true);
    expect(s).toBe("Anemones, starfish and small crabs live…");
  });

  it("cuts inside a word when there is no space near the end", () => {
    expect(shortQuote("x".repeat(100), 10)).toBe(`${"x".repeat(10)}…`);
  });
});

describe("finding a thread's quote in its answer's text", () => {
  it("finds it where it is", () => {
    const text = "Anemones, starfish and small crabs.";
    const at = findQuote(text, "small crabs")!;
    expect(text.slice(...at)).toBe("small crabs");
  });

  it("ignores whitespace: a folded selection across paragraphs, rendered without any", () => {
    // the selection "one.\n\nTwo" was folded to "one. Two"; the rendered text has no gap at all
    const text = "Paragraph one.Two starts here.";
    const at = findQuote(text, "one. Two")!;
    expect(text.slice(...at)).toBe("one.Two");
    expect(findQuote("a\n  b c", "a b")).toEqual([0, 5]);
  });

  it("is null when the answer no longer has it, or the quote is blank", () => {
    expect(findQuote("The text was edited.", "small crabs")).toBeNull();
    expect(findQuote("anything", "  ")).toBeNull();
  });
});
