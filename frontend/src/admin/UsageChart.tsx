// A stacked bar chart in plain SVG: one bar per day, one colour per group, a legend with each
// group's total, and a text summary for screen readers.
import { useT } from "../i18n";
import { formatMetric, type Metric, type Series } from "./usage";

const COLOURS = ["#4f46e5", "#0ea5e9", "#16a34a", "#f59e0b", "#dc2626", "#9333ea", "#64748b"];
const W = 720;
const H = 240;
const PAD = { l: 56, r: 8, t: 10, b: 28 };

function day(ms: number): string {
  return new Date(ms).toISOString().slice(5, 10);
}

export function UsageChart({ s, metric, label }: { s: Series; metric: Metric; label: string }) {
  const t = useT();
  const innerW = W - PAD.l - PAD.r;
  const innerH = H - PAD.t - PAD.b;
  const bw = innerW / Math.max(1, s.days.length);
  const y = (v: number) => (s.max > 0 ? (v / s.max) * innerH : 0);
  const colour = (g: number) => COLOURS[g % COLOURS.length];
  const every = Math.ceil(s.days.length / 8);
  return (
    <figure className="usage-chart">
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={label} preserveAspectRatio="none">
        <line x1={PAD.l} x2={W - PAD.r} y1={H - PAD.b} y2={H - PAD.b} className="axis" />
        <text x={PAD.l - 6} y={PAD.t + 10} textAnchor="end" className="tick">
          {formatMetric(s.max, metric)}
        </text>
        <text x={PAD.l - 6} y={H - PAD.b} textAnchor="end" className="tick">
          0
        </text>
        {s.days.map((d, i) => {
          let base = H - PAD.b;
          return (
            <g key={d}>
              {s.value[i].map((v, g) => {
                const h = y(v);
                base -= h;
                return v > 0 ? (
                  <rect key={g} x={PAD.l + i * bw + bw * 0.1} y={base} width={bw * 0.8} height={h} fill={colour(g)}>
                    <title>{`${day(d)} · ${s.groups[g]}: ${formatMetric(v, metric)}`}</title>
                  </rect>
                ) : null;
              })}
              {i % every === 0 && (
                <text x={PAD.l + i * bw + bw / 2} y={H - 8} textAnchor="middle" className="tick">
                  {day(d)}
                </text>
              )}
            </g>
          );
        })}
      </svg>
      <figcaption>
        <ul className="legend">
          {s.groups.map((g, i) => (
            <li key={g}>
              <span className="swatch" style={{ background: colour(i) }} aria-hidden="true" />
              {g}: <strong>{formatMetric(s.totals[g], metric)}</strong>
            </li>
          ))}
        </ul>
        {s.groups.length === 0 && <p className="muted">{t("noUsage")}</p>}
      </figcaption>
    </figure>
  );
}
