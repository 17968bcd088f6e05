// A search's metric (y) against one hyperparameter (x, picked in a select): one point per trial
// with the metric, coloured by it (hparams.ts `metricColor`, best yellow); categories spread a
// little, the same way every time. Trials outside `selected` (brushed elsewhere) are faint; no
// `selected`: all are in. Hand-written SVG scaled to its box.

import { useMemo, useState } from "react";
import {
  axesOf,
  clip,
  formatValue,
  goodness,
  type HpViewProps,
  jitter,
  metricColor,
  NO_METRIC_COLOR,
  position,
  shortNumber,
  splitAxes,
  valueAt,
  valueOf,
} from "../hparams";

const W = 640;
const H = 320;
const L = 64;
const R = 16;
const T = 14;
const B = 52;
const PAD = 12; // points stay this far inside the plot
const PW = W - L - R;
const PH = H - T - B;


export function HpScatter({ trials, metricName, smallerIsBetter, selected = null }: HpViewProps) {
  const axes = useMemo(() => axesOf(trials, metricName), [trials, metricName]);
  const { hpAxes, metricAxis } = splitAxes(axes);
  const [picked, setPicked] = useState<string | null>(null);
  const axis = hpAxes.find((a) => a.key === picked) ?? hpAxes[0];

  if (!axis) {
    return (
      <div className="hp-view" data-testid="hp-scatter">
        <p className="muted">No hyperparameter varies across these trials.</p>
      </div>
    );
  }

  const xOf = (id: number, value: number | string | null): number | null => {
    if (axis.kind === "category") {
      const index = value === null ? -1 : axis.categories.indexOf(String(value));
      if (index < 0) return null;
      const band = PW / axis.categories.length;
      return L + (index + 0.5 + jitter(id) * 0.5) * band;
    }
    const p = position(axis, value);
    return p === null ? null : L + PAD + Math.min(1, Math.max(0, p)) * (PW - 2 * PAD);
  };
  const yOf = (t: number) => T + PAD + (1 - Math.min(1, Math.max(0, t))) * (PH - 2 * PAD);

  const points = [];
  let withoutMetric = 0;
  for (const trial of trials) {
    const metric = valueOf(trial, metricName, metricName);
    const value = valueOf(trial, axis.key, metricName);
    const x = xOf(trial.id, value);
    const p = position(metricAxis, metric);
    if (p === null) {
      withoutMetric++;
      continue;
    }
    if (x === null) continue;
    const good = goodness(metricAxis, metric as number, smallerIsBetter);
    points.push({
      id: trial.id,
      x,
      y: yOf(p),
      on: !selected || selected.has(trial.id),
      colour: good === null ? NO_METRIC_COLOR : metricColor(good),
      title: `trial ${trial.id}: ${axis.key} = ${formatValue(value)}, ${metricName} = ${formatValue(metric)}`,
    });
  }
  points.sort((a, b) => Number(a.on) - Number(b.on));

  const xTicks =
    axis.kind === "category"
      ? axis.categories
          .map((c, i) => ({ x: L + (i + 0.5) * (PW / axis.categories.length), label: c }))
          .filter((_, i, all) => i % Math.ceil(all.length / 10) === 0)
      : [0, 0.25, 0.5, 0.75, 1].map((t) => ({
          x: L + PAD + t * (PW - 2 * PAD),
          label: shortNumber(valueAt(axis, t)),
        }));
  const yTicks =
    points.length === 0
      ? []
      : metricAxis.max === metricAxis.min
        ? [{ y: yOf(0.5), label: shortNumber(metricAxis.min) }]
        : [0, 0.25, 0.5, 0.75, 1].map((t) => ({ y: yOf(t), label: shortNumber(valueAt(metricAxis, t)) }));
  const tickChars = Math.max(4, Math.floor(PW / Math.max(1, xTicks.length) / 6.5));

  return (
    <div className="hp-view" data-testid="hp-scatter">
      <div className="hp-controls">
        <label>
          hyperparameter{" "}
          <select value={axis.key} onChange={(e) => setPicked(e.target.value)}>
            {hpAxes.map((a) => (
              <option key={a.key} value={a.key}>
                {a.key}
              </option>
            ))}
          </select>
        </label>
        {withoutMetric > 0 ? (
          <span className="muted">
            {withoutMetric} trial{withoutMetric === 1 ? "" : "s"} without {metricName} yet not shown
          </span>
        ) : null}
      </div>
      <div className="hp-plot">
        <svg
          className="hp-fixed"
          viewBox={`0 0 ${W} ${H}`}
          width="100%"
          role="img"
          aria-label={`${metricName} against ${axis.key} for ${points.length} trials`}
        >
          <rect className="hp-frame" x={L} y={T} width={PW} height={PH} />
          {yTicks.map((tick) => (
            <g key={tick.y}>
              <line className="hp-grid" x1={L} x2={L + PW} y1={tick.y} y2={tick.y} />
              <text className="hp-tick" x={L - 6} y={tick.y + 4} textAnchor="end">
                {tick.label}
              </text>
            </g>
          ))}
          {xTicks.map((tick) => (
            <text key={tick.x} className="hp-tick" x={tick.x} y={T + PH + 16} textAnchor="middle">
              {clip(tick.label, tickChars)}
            </text>
          ))}
          <text className="hp-axis-title" x={L + PW / 2} y={H - 8} textAnchor="middle">
            {axis.key}
            {axis.log ? " (log)" : ""}
          </text>
          <text
            className="hp-axis-title"
            transform={`translate(14 ${T + PH / 2}) rotate(-90)`}
            textAnchor="middle"
          >
            {metricName}
            {metricAxis.log ? " (log)" : ""}
          </text>
          {points.map((p) => (
            <circle
              key={p.id}
              className="hp-point"
              data-trial={p.id}
              data-selected={p.on ? "true" : "false"}
              cx={p.x.toFixed(1)}
              cy={p.y.toFixed(1)}
              r={p.on ? 4.5 : 3.5}
              fill={p.on ? p.colour : "#d1d5db"}
              fillOpacity={p.on ? 0.9 : 0.6}
            >
              <title>{p.title}</title>
            </circle>
          ))}
        </svg>
      </div>
      {points.length === 0 ? <p className="muted">No trial has reported {metricName} yet.</p> : null}
    </div>
  );
}
