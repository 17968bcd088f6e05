// The mean metric over a grid of two hyperparameters (picked in two selects; the first two that
// vary by default): categories one column/row each, numbers 10 equal bins along their axis (log
// where the axis is). Cells are coloured by their mean (hparams.ts `metricColor`, best yellow,
// on the scale of all trials), empty cells left blank. With `selected` (brushed elsewhere) only
// those trials count. Hand-written SVG scaled to its box, a legend below.

import { useMemo, useState } from "react";
import {
  axesOf,
  clip,
  formatValue,
  goodness,
  heatCells,
  type HpViewProps,
  metricColor,
  NO_METRIC_COLOR,
  shortNumber,
  splitAxes,
} from "../hparams";

const W = 640;
const H = 380;
const L = 120;
const R = 16;
const T = 12;
const B = 80;
const PW = W - L - R;
const PH = H - T - B;
const BINS = 10;


export function HpHeatMap({ trials, metricName, smallerIsBetter, selected = null }: HpViewProps) {
  const axes = useMemo(() => axesOf(trials, metricName), [trials, metricName]);
  const { hpAxes, metricAxis } = splitAxes(axes);
  const [pickedX, setPickedX] = useState<string | null>(null);
  const [pickedY, setPickedY] = useState<string | null>(null);
  const xAxis = hpAxes.find((a) => a.key === pickedX) ?? hpAxes[0];
  const yAxis = hpAxes.find((a) => a.key === pickedY) ?? hpAxes[1];
  const counted = useMemo(
    () => (selected ? trials.filter((t) => selected.has(t.id)) : trials),
    [trials, selected],
  );
  const grid = useMemo(
    () =>
      xAxis && yAxis ? heatCells(counted, xAxis, yAxis, metricName, BINS, smallerIsBetter) : null,
    [counted, xAxis, yAxis, metricName, smallerIsBetter],
  );

  if (!xAxis || !yAxis || !grid) {
    return (
      <div className="hp-view" data-testid="hp-heatmap">
        <p className="muted">
          A heat map needs two hyperparameters that vary across the trials; here{" "}
          {hpAxes.length === 0 ? "none does" : `only ${hpAxes[0].key} does`}.
        </p>
      </div>
    );
  }

  const cw = PW / grid.xLabels.length;
  const ch = PH / grid.yLabels.length;
  const colourOf = (mean: number) => {
    const good = goodness(metricAxis, mean, smallerIsBetter);
    return { fill: good === null ? NO_METRIC_COLOR : metricColor(good), light: (good ?? 0) > 0.6 };
  };
  const xEvery = Math.ceil(grid.xLabels.length / 12);
  const yEvery = Math.ceil(grid.yLabels.length / 14);
  const best = smallerIsBetter ? metricAxis.min : metricAxis.max;
  const worst = smallerIsBetter ? metricAxis.max : metricAxis.min;
  const ramp = [0, 0.25, 0.5, 0.75, 1].map((t) => `${metricColor(t)} ${t * 100}%`).join(", ");
  const select = (value: string, set: (key: string) => void) => (
    <select value={value} onChange={(e) => set(e.target.value)}>
      {hpAxes.map((a) => (
        <option key={a.key} value={a.key}>
          {a.key}
        </option>
      ))}
    </select>
  );

  return (
    <div className="hp-view" data-testid="hp-heatmap">
      <div className="hp-controls">
        <label>x {select(xAxis.key, setPickedX)}</label>
        <label>y {select(yAxis.key, setPickedY)}</label>
        {selected ? (
          <span className="muted">
            {counted.length} of {trials.length} trials (the selected ones)
          </span>
        ) : null}
      </div>
      <div className="hp-plot">
        <svg
          className="hp-fixed"
          viewBox={`0 0 ${W} ${H}`}
          width="100%"
          role="img"
          aria-label={`mean ${metricName} by ${xAxis.key} and ${yAxis.key}`}
        >
          <rect className="hp-frame" x={L} y={T} width={PW} height={PH} />
          {grid.cells.map((cell) => {
            const { fill, light } = colourOf(cell.mean);
            const x = L + cell.x * cw;
            const y = T + (grid.yLabels.length - 1 - cell.y) * ch;
            return (
              <g key={`${cell.x},${cell.y}`}>
                <rect
                  className="hp-cell"
                  data-testid="hp-cell"
                  data-x={cell.x}
                  data-y={cell.y}
                  data-count={cell.count}
                  x={x}
                  y={y}
                  width={cw}
                  height={ch}
                  fill={fill}
                >
                  <title>
                    {`${xAxis.key} ${grid.xLabels[cell.x]}, ${yAxis.key} ${grid.yLabels[cell.y]}: ` +
                      `mean ${metricName} ${formatValue(cell.mean)} over ${cell.count} ` +
                      `trial${cell.count === 1 ? "" : "s"}`}
                  </title>
                </rect>
                {cw >= 40 && ch >= 16 ? (
                  <text
                    className={light ? "hp-cell-text" : "hp-cell-text on-dark"}
                    x={x + cw / 2}
                    y={y + ch / 2 + 4}
                    textAnchor="middle"
                  >
                    {shortNumber(cell.mean)}
                  </text>
                ) : null}
              </g>
            );
          })}
          {grid.xLabels.map((label, i) =>
            i % xEvery === 0 ? (
              <text
                key={i}
                className="hp-tick"
                textAnchor="end"
                transform={`translate(${L + (i + 0.5) * cw + 4} ${T + PH + 12}) rotate(-35)`}
              >
                {clip(label, 16)}
                <title>{label}</title>
              </text>
            ) : null,
          )}
          {grid.yLabels.map((label, i) =>
            i % yEvery === 0 ? (
              <text
                key={i}
                className="hp-tick"
                x={L - 6}
                y={T + (grid.yLabels.length - 1 - i + 0.5) * ch + 4}
                textAnchor="end"
              >
                {clip(label, 14)}
                <title>{label}</title>
              </text>
            ) : null,
          )}
          <text className="hp-axis-title" x={L + PW / 2} y={H - 6} textAnchor="middle">
            {xAxis.key}
            {xAxis.log ? " (log)" : ""}
          </text>
          <text
            className="hp-axis-title"
            transform={`translate(14 ${T + PH / 2}) rotate(-90)`}
            textAnchor="middle"
          >
            {clip(yAxis.key + (yAxis.log ? " (log)" : ""), 40)}
          </text>
        </svg>
      </div>
      {grid.cells.length === 0 ? (
        <p className="muted">No trial here has reported {metricName} yet.</p>
      ) : (
        <div className="hp-legend" aria-label={`colour scale of mean ${metricName}`}>
          <span>
            mean {metricName}: {shortNumber(worst)} (worst)
          </span>
          <span className="hp-ramp" style={{ background: `linear-gradient(to right, ${ramp})` }} />
          <span>{shortNumber(best)} (best)</span>
        </div>
      )}
    </div>
  );
}
