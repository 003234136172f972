// Pure shaping of the usage rows for the chart: one bar per UTC day, stacked by model or by
// user, measuring cost, tokens or answers. No React, so vitest checks it directly.
import type { UsageRow } from "../api/console";

export type GroupBy = "model" | "user";
export type Metric = "cost" | "tokens" | "answers";
export const DAY_MS = 86_400_000;

export interface Series {
  days: number[];
  groups: string[];
  /** value[dayIndex][groupIndex] */
  value: number[][];
  max: number;
  totals: Record<string, number>;
}

export function measure(r: UsageRow, m: Metric): number {
  if (m === "cost") return r.cost;
  if (m === "tokens") return r.input_tokens + r.output_tokens;
  return r.answers;
}

export function series(rows: UsageRow[], since: number, days: number, by: GroupBy, m: Metric): Series {
  const dayList = Array.from({ length: days }, (_, i) => since + i * DAY_MS);
  const totals: Record<string, number> = {};
  for (const r of rows) {
    const g = by === "model" ? r.model_id || "—" : r.user_email;
    totals[g] = (totals[g] ?? 0) + measure(r, m);
  }
  const groups = Object.keys(totals).sort((a, b) => totals[b] - totals[a] || a.localeCompare(b));
  const value = dayList.map(() => groups.map(() => 0));
  for (const r of rows) {
    const d = Math.round((r.day - since) / DAY_MS);
    if (d < 0 || d >= days) continue;
    const g = groups.indexOf(by === "model" ? r.model_id || "—" : r.user_email);
    value[d][g] += measure(r, m);
  }
  const max = Math.max(0, ...value.map((v) => v.reduce((a, b) => a + b, 0)));
  return { days: dayList, groups, value, max, totals };
}

export function formatMetric(v: number, m: Metric): string {
  if (m === "cost") return `$${v < 1 ? v.toFixed(4) : v.toFixed(2)}`;
  return Math.round(v).toLocaleString();
}
