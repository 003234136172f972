import { describe, expect, it } from "vitest";
import { reportOf } from "../src/context/report";

describe("reportOf", () => {
  it("reads the report a turn stored", () => {
    const context = { sections: [{ name: "history", tokens: 3 }], memory_ids: ["mem_1"] };
    expect(reportOf({ context })?.memory_ids).toEqual(["mem_1"]);
  });
  it("is null for a caller's own context key that is not a report", () => {
    for (const context of ["mine", [1], { sections: 5 }, { note: 1 }, { sections: [], memory_ids: "x" }]) {
      expect(reportOf({ context })).toBeNull();
    }
    expect(reportOf(null)).toBeNull();
    expect(reportOf({})).toBeNull();
  });
});
