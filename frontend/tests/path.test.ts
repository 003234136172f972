import { describe, expect, it } from "vitest";
import type { Message } from "../src/api/types";
import { branchNav, mergeOlder, questionOf, quoteFrom, replaceMessages, streamingIn } from "../src/tree/path";
import { splitHits } from "../src/sidebar/highlight";
import { completedSentences } from "../src/chat/Announcer";
import { browserLanguage, errorText, format, translator } from "../src/i18n";
import { en } from "../src/i18n/en";
import { zh } from "../src/i18n/zh";
import { ROUTES } from "../src/app/routes";

const msg = (id: string, over: Partial<Message> = {}): Message => ({
  id, conversation_id: "c", parent_id: null, role: "user", blocks: [], text: id, status: "complete",
  stop_reason: null, error: "", model_id: "", model_label: "", created_at: 0,
  branch_index: 0, branch_count: 1, sibling_ids: [id], ...over,
}) as Message;

describe("the active path", () => {
  it("prepends older pages once", () => {
    const loaded = [msg("c"), msg("d")];
    expect(mergeOlder(loaded, [msg("a"), msg("b"), msg("c")]).map((m) => m.id)).toEqual(["a", "b", "c", "d"]);
  });

  it("replaces edited rows in place", () => {
    const out = replaceMessages([msg("a"), msg("b")], [msg("b", { text: "new" })]);
    expect(out.map((m) => m.text)).toEqual(["a", "new"]);
  });

  it("computes branch arrows n/m with the neighbours' ids", () => {
    expect(branchNav(msg("a"))).toBeNull();
    const nav = branchNav(msg("b", { branch_index: 1, branch_count: 3, sibling_ids: ["a", "b", "c"] }))!;
    expect(nav).toEqual({ index: 1, count: 3, label: "2/3", prev: "a", next: "c" });
    const first = branchNav(msg("a", { branch_index: 0, branch_count: 2, sibling_ids: ["a", "b"] }))!;
    expect([first.prev, first.next, first.label]).toEqual([null, "b", "1/2"]);
    const last = branchNav(msg("b", { branch_index: 1, branch_count: 2, sibling_ids: ["a", "b"] }))!;
    expect([last.prev, last.next]).toEqual(["a", null]);
  });

  it("finds the question of an answer and a streaming message", () => {
    const q = msg("q");
    const a = msg("a", { role: "assistant", parent_id: "q", status: "streaming" });
    expect(questionOf([q, a], a)).toBe(q);
    expect(questionOf([q, a], q)).toBeNull();
    expect(streamingIn([q, a])).toBe(a);
  });

  it("normalises a selection into a quote within the limit", () => {
    expect(quoteFrom("   ")).toBeNull();
    expect(quoteFrom("  two\n\nlines ")).toBe("two lines");
    expect(quoteFrom("x".repeat(5000))!.length).toBe(4000);
  });
});

describe("search highlighting", () => {
  it("marks every case-insensitive hit", () => {
    expect(splitHits("Tide pools and TIDE charts", "tide")).toEqual([
      { text: "Tide", hit: true },
      { text: " pools and ", hit: false },
      { text: "TIDE", hit: true },
      { text: " charts", hit: false },
    ]);
    expect(splitHits("abc", "")).toEqual([{ text: "abc", hit: false }]);
  });
});

describe("announcements", () => {
  it("reads out finished sentences only", () => {
    expect(completedSentences("Hello there. How ar", 0)).toBe("Hello there.");
    expect(completedSentences("Hello there. How are you? I", 12)).toBe(" How are you?");
    expect(completedSentences("no end yet", 0)).toBe("");
    expect(completedSentences("你好。再见", 0)).toBe("你好。");
  });
});

describe("i18n", () => {
  it("has the same keys in every language", () => {
    expect(Object.keys(zh).sort()).toEqual(Object.keys(en).sort());
  });

  it("picks the browser language and formats", () => {
    expect(browserLanguage(["zh-CN", "en"])).toBe("zh");
    expect(browserLanguage(["fr", "en-GB"])).toBe("en");
    expect(browserLanguage(["fr"])).toBe("en");
    expect(format("{a} of {b}", { a: 1, b: 2 })).toBe("1 of 2");
    expect(translator("zh")("newChat")).toBe("新对话");
  });

  it("turns API error codes into human messages", () => {
    const t = translator("en");
    expect(errorText(t, "generation_interrupted")).toMatch(/interrupted/);
    expect(errorText(t, "too_many_turns")).toMatch(/Too many answers/);
    expect(errorText(t, "weird_code", "server said")).toBe("Something went wrong: server said");
  });
});

describe("routes", () => {
  it("lists the browser routes the server must serve", () => {
    expect(ROUTES).toContain("/c/:conversationId");
  });
});
