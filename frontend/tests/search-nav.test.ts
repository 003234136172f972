import { describe, expect, it } from "vitest";
import type { SearchResult } from "../src/api/types";
import { moveActive, searchOptions } from "../src/sidebar/searchNav";

describe("the search dialog's options", () => {
  it("lists title hits, then message hits, each with an id and where it opens", () => {
    const data = {
      query: "kelp",
      conversations: [{ id: "c1", title: "Kelp" }],
      messages: [
        { id: "m1", conversation_id: "c2", conversation_title: "Seals", snippet: { text: "kelp" } },
        { id: "m2", conversation_id: "c1", conversation_title: "Kelp", snippet: { text: "kelp" } },
      ],
    } as unknown as SearchResult;
    expect(searchOptions(data, "x")).toEqual([
      { id: "x-c-c1", path: "/c/c1" },
      { id: "x-m-m1", path: "/c/c2?m=m1" },
      { id: "x-m-m2", path: "/c/c1?m=m2" },
    ]);
    expect(searchOptions(undefined)).toEqual([]);
  });
});

describe("the highlighted option under the arrow keys", () => {
  it("goes down and up, wrapping at both ends", () => {
    expect(moveActive(0, 3, "ArrowDown")).toBe(1);
    expect(moveActive(2, 3, "ArrowDown")).toBe(0);
    expect(moveActive(1, 3, "ArrowUp")).toBe(0);
    expect(moveActive(0, 3, "ArrowUp")).toBe(2);
  });

  it("starts at the first (down) or the last (up) when none is highlighted", () => {
    expect(moveActive(-1, 3, "ArrowDown")).toBe(0);
    expect(moveActive(-1, 3, "ArrowUp")).toBe(2);
    expect(moveActive(7, 3, "ArrowDown")).toBe(0); // stale after fewer results
  });

  it("highlights nothing when there are no results", () => {
    expect(moveActive(-1, 0, "ArrowDown")).toBe(-1);
    expect(moveActive(0, 0, "ArrowUp")).toBe(-1);
  });
});
