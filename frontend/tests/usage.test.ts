import { describe, expect, it } from "vitest";
import { DAY_MS, series } from "../src/admin/usage";

const row = (day: number, model: string, user: string, cost: number, answers = 1) => ({
  day,
  user_id: user,
  user_email: `${user}@x`,
  model_id: model,
  answers,
  input_tokens: 10,
  output_tokens: 5,
  cost,
});

describe("usage series", () => {
  const since = 100 * DAY_MS;
  const rows = [row(since, "a", "u", 1), row(since, "b", "u", 3), row(since + 2 * DAY_MS, "a", "v", 2)];
  it("stacks days by model, biggest group first", () => {
    const s = series(rows, since, 3, "model", "cost");
    expect(s.days).toHaveLength(3);
    expect(s.groups).toEqual(["a", "b"]);
    expect(s.value).toEqual([[1, 3], [0, 0], [2, 0]]);
    expect(s.max).toBe(4);
  });
  it("groups by user and measures tokens", () => {
    const s = series(rows, since, 3, "user", "tokens");
    expect(s.groups).toEqual(["u@x", "v@x"]);
    expect(s.totals["u@x"]).toBe(30);
  });
  it("ignores rows outside the window", () => {
    const s = series([row(since - DAY_MS, "a", "u", 9)], since, 2, "model", "cost");
    expect(s.max).toBe(0);
  });
});
