// Admin → Usage: answers, tokens and cost per day, by model or by user, over 7/30/90 days.
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { con } from "../api/console";
import { useT } from "../i18n";
import { Guard } from "./Guard";
import { UsageChart } from "./UsageChart";
import { series, type GroupBy, type Metric } from "./usage";

const PERIODS = [7, 30, 90];

export function UsageSection() {
  const t = useT();
  const [days, setDays] = useState(30);
  const [by, setBy] = useState<GroupBy>("model");
  const [metric, setMetric] = useState<Metric>("cost");
  const q = useQuery({ queryKey: ["admin", "usage", days], queryFn: () => con.usage(days) });
  return (
    <section aria-label={t("usage")}>
      <div className="admin-filters">
        <label>
          <span>{t("usageDays")}</span>
          <select value={days} onChange={(e) => setDays(Number(e.target.value))}>
            {PERIODS.map((n) => (
              <option key={n} value={n}>
                {t("lastDays", { n })}
              </option>
            ))}
          </select>
        </label>
        <label>
          <span>{t("usage")}</span>
          <select value={metric} onChange={(e) => setMetric(e.target.value as Metric)}>
            <option value="cost">{t("usageCost")}</option>
            <option value="tokens">{t("usageTokens")}</option>
            <option value="answers">{t("usageAnswers")}</option>
          </select>
        </label>
        <label>
          <span className="sr-only">{t("byModel")}</span>
          <select value={by} onChange={(e) => setBy(e.target.value as GroupBy)}>
            <option value="model">{t("byModel")}</option>
            <option value="user">{t("byUser")}</option>
          </select>
        </label>
      </div>
      <Guard q={q}>
        {(d) => (
          <UsageChart
            s={series(d.rows, d.since, days, by, metric)}
            metric={metric}
            label={`${t("usage")} · ${t(by === "model" ? "byModel" : "byUser")} · ${t("lastDays", { n: days })}`}
          />
        )}
      </Guard>
    </section>
  );
}
