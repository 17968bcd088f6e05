// Hyperparameter search data for the parallel coordinates, scatter and heat map views: trials'
// hyperparameters (nested ones flattened to dotted keys, `optimizer.lr`) as axes with 0..1
// positions, brushes on those positions, binned means, and the one metric colour scale.
// Pure: no React, no requests. Position 0 is an axis's low end (smallest number, first
// category), 1 its high end. Colours: metricColor(1) is the best value, whichever way is better.

import { formatNumber } from "./format";

export interface HpTrial {
  id: number;
  hparams: Record<string, unknown>;
  metric: number | null; // the searcher's metric (null: none reported yet)
}

export interface Axis {
  key: string; // dotted hyperparameter key, or the metric's name for the last axis
  kind: "number" | "category";
  min: number; // number axes: the smallest and largest value (0 for category axes)
  max: number;
  log: boolean; // all values > 0 and max/min >= 100
  categories: string[]; // category axes: the distinct values, sorted
}

// Ranges of axis positions by axis key, each [lo, hi] with 0 <= lo <= hi <= 1.
export type Brushes = Record<string, [number, number]>;

export interface HeatCell {
  x: number; // bin index into xLabels
  y: number; // bin index into yLabels
  mean: number; // mean metric of the trials in the cell
  count: number;
}

const flattened = new WeakMap<object, Record<string, unknown>>();

// `{optimizer: {lr: 0.1}}` → `{"optimizer.lr": 0.1}`; arrays and scalars are leaves.
export function flatten(hparams: Record<string, unknown> | null | undefined): Record<string, unknown> {
  if (!hparams) return {};
  const cached = flattened.get(hparams);
  if (cached) return cached;
  const out: Record<string, unknown> = {};
  const walk = (value: unknown, prefix: string) => {
    if (value !== null && typeof value === "object" && !Array.isArray(value)) {
      for (const [k, v] of Object.entries(value)) walk(v, prefix ? `${prefix}.${k}` : k);
    } else if (prefix) {
      out[prefix] = value;
    }
  };
  walk(hparams, "");
  flattened.set(hparams, out);
  return out;
}

// A raw hyperparameter value as an axis value: finite numbers stay numbers, missing ones
// (undefined, null, NaN) are null, anything else is its text ("true", '["a",1]').
function scalar(value: unknown): number | string | null {
  if (value === undefined || value === null) return null;
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  if (typeof value === "string") return value;
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

// Numeric text in numeric order ("8" < "16"), other text by code unit.
function compareCategories(a: string, b: string): number {
  const x = Number(a);
  const y = Number(b);
  if (a.trim() !== "" && b.trim() !== "" && Number.isFinite(x) && Number.isFinite(y) && x !== y) {
    return x - y;
  }
  return a < b ? -1 : a > b ? 1 : 0;
}

function numberAxis(key: string, values: number[]): Axis {
  let min = Infinity;
  let max = -Infinity;
  for (const v of values) {
    if (v < min) min = v;
    if (v > max) max = v;
  }
  if (values.length === 0) min = max = 0;
  const log = values.length > 0 && min > 0 && max / min >= 100;
  return { key, kind: "number", min, max, log, categories: [] };
}

export function valueOf(trial: HpTrial, key: string, metricName: string): number | string | null {
  if (key === metricName) {
    return typeof trial.metric === "number" && Number.isFinite(trial.metric) ? trial.metric : null;
  }
  return scalar(flatten(trial.hparams)[key]);
}

// One axis per hyperparameter that takes two or more values across the trials (missing values
// don't count), in key order, then the metric's axis (trials without a metric left out of its
// range). A hyperparameter named like the metric is left out: the metric's axis has that key.
export function axesOf(trials: HpTrial[], metricName: string): Axis[] {
  const keys = new Set<string>();
  for (const trial of trials) for (const key of Object.keys(flatten(trial.hparams))) keys.add(key);
  const axes: Axis[] = [];
  for (const key of [...keys].sort()) {
    if (key === metricName) continue;
    const values = trials
      .map((t) => valueOf(t, key, metricName))
      .filter((v): v is number | string => v !== null);
    if (values.every((v) => typeof v === "number")) {
      if (new Set(values).size > 1) axes.push(numberAxis(key, values as number[]));
    } else {
      const categories = [...new Set(values.map(String))].sort(compareCategories);
      if (categories.length > 1) axes.push({ key, kind: "category", min: 0, max: 0, log: false, categories });
    }
  }
  const metrics = trials
    .map((t) => valueOf(t, metricName, metricName))
    .filter((v): v is number => v !== null);
  axes.push(numberAxis(metricName, metrics));
  return axes;
}

// Where a value sits along an axis, 0..1 (outside that for numbers beyond the axis's range);
// null when missing or not on the axis. A category axis spaces its categories evenly (one
// alone sits at 0.5); a number axis with a single value puts it at 0.5.
export function position(axis: Axis, value: number | string | null | undefined): number | null {
  if (value === null || value === undefined) return null;
  if (axis.kind === "category") {
    const index = axis.categories.indexOf(String(value));
    if (index < 0) return null;
    return axis.categories.length === 1 ? 0.5 : index / (axis.categories.length - 1);
  }
  if (typeof value !== "number" || !Number.isFinite(value)) return null;
  if (axis.max === axis.min) return 0.5;
  if (axis.log) {
    if (value <= 0) return null;
    return Math.log(value / axis.min) / Math.log(axis.max / axis.min);
  }
  return (value - axis.min) / (axis.max - axis.min);
}

// The number at position t of a number axis (the inverse of `position`).
export function valueAt(axis: Axis, t: number): number {
  if (axis.log) return axis.min * Math.pow(axis.max / axis.min, t);
  return axis.min + (axis.max - axis.min) * t;
}

// A short label for a number: `digits` significant digits, exponent form when long.
export function shortNumber(value: number, digits = 3): string {
  if (!Number.isFinite(value)) return String(value);
  const text = String(Number(value.toPrecision(digits)));
  return text.length > 7 ? value.toExponential(Math.max(0, digits - 2)) : text;
}

// What a brush on an axis keeps, in words: "0.01 to 0.3", or the categories inside it.
export function describeRange(axis: Axis, [lo, hi]: [number, number]): string {
  if (axis.kind === "number") return `${shortNumber(valueAt(axis, lo))} to ${shortNumber(valueAt(axis, hi))}`;
  const inside = axis.categories.filter((c) => {
    const p = position(axis, c);
    return p !== null && p >= lo && p <= hi;
  });
  return inside.length ? inside.join(", ") : "none";
}

// The ids of trials inside every brush. A brush on a key with no axis is ignored; a trial with
// no value on a brushed axis is out. No brushes: every trial.
export function brushed(
  trials: HpTrial[],
  axes: Axis[],
  brushes: Brushes,
  metricName: string,
): Set<number> {
  const active = axes.filter((a) => brushes[a.key]);
  const ids = new Set<number>();
  for (const trial of trials) {
    const inside = active.every((axis) => {
      const [a, b] = brushes[axis.key];
      const lo = Math.min(a, b);
      const hi = Math.max(a, b);
      const p = position(axis, valueOf(trial, axis.key, metricName));
      return p !== null && p >= lo - 1e-9 && p <= hi + 1e-9;
    });
    if (inside) ids.add(trial.id);
  }
  return ids;
}

// The bin of a value along an axis: a category's index, or one of `bins` equal slices of the
// axis position (linear or log as the axis is). Null: missing.
function binOf(axis: Axis, value: number | string | null, bins: number): number | null {
  if (axis.kind === "category") {
    const index = value === null ? -1 : axis.categories.indexOf(String(value));
    return index < 0 ? null : index;
  }
  const p = position(axis, value);
  if (p === null) return null;
  return Math.min(bins - 1, Math.max(0, Math.floor(p * bins + 1e-9))); // an edge: the upper bin
}

function binLabels(axis: Axis, bins: number): string[] {
  if (axis.kind === "category") return [...axis.categories];
  // Edges with the fewest significant digits (2 or more) that tell them apart.
  const edges = Array.from({ length: bins + 1 }, (_, i) => valueAt(axis, i / bins));
  let text: string[] = [];
  for (let digits = 2; digits <= 6; ++digits) {
    text = edges.map((e) => shortNumber(e, digits));
    if (text.every((t, i) => i === 0 || t !== text[i - 1])) break;
  }
  return Array.from({ length: bins }, (_, i) => `${text[i]}–${text[i + 1]}`);
}

// Trials binned on two axes, each non-empty cell with its trials' mean metric and their count
// (trials without the metric or either value are left out). `lo`/`hi` are the smallest and
// largest cell means; `best` the cell with the best mean (per smallerIsBetter), or null.
export function heatCells(
  trials: HpTrial[],
  xAxis: Axis,
  yAxis: Axis,
  metricName: string,
  bins = 10,
  smallerIsBetter = true,
): { xLabels: string[]; yLabels: string[]; cells: HeatCell[]; lo: number; hi: number; best: HeatCell | null } {
  const n = Math.max(1, Math.floor(bins));
  const xLabels = binLabels(xAxis, n);
  const yLabels = binLabels(yAxis, n);
  const sums = new Map<number, { x: number; y: number; sum: number; count: number }>();
  for (const trial of trials) {
    const metric = valueOf(trial, metricName, metricName);
    if (typeof metric !== "number") continue;
    const x = binOf(xAxis, valueOf(trial, xAxis.key, metricName), n);
    const y = binOf(yAxis, valueOf(trial, yAxis.key, metricName), n);
    if (x === null || y === null) continue;
    const id = y * xLabels.length + x;
    const cell = sums.get(id) ?? { x, y, sum: 0, count: 0 };
    cell.sum += metric;
    cell.count += 1;
    sums.set(id, cell);
  }
  const cells = [...sums.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([, c]) => ({ x: c.x, y: c.y, mean: c.sum / c.count, count: c.count }));
  let lo = Infinity;
  let hi = -Infinity;
  let best: HeatCell | null = null;
  for (const cell of cells) {
    lo = Math.min(lo, cell.mean);
    hi = Math.max(hi, cell.mean);
    if (!best || (smallerIsBetter ? cell.mean < best.mean : cell.mean > best.mean)) best = cell;
  }
  if (cells.length === 0) lo = hi = 0;
  return { xLabels, yLabels, cells, lo, hi, best };
}

// How good a metric value is on the metric's axis, 0 (worst) .. 1 (best); null when missing.
export function goodness(metricAxis: Axis, value: number | null, smallerIsBetter: boolean): number | null {
  const p = position(metricAxis, value);
  if (p === null) return null;
  const t = Math.min(1, Math.max(0, p));
  return smallerIsBetter ? 1 - t : t;
}

// Viridis at 5 stops: dark purple (0, worst) through teal to yellow (1, best).
const STOPS: [number, number, number][] = [
  [68, 1, 84],
  [59, 82, 139],
  [33, 145, 140],
  [94, 201, 98],
  [253, 231, 37],
];

// Trials without a metric, and values outside any scale.
export const NO_METRIC_COLOR = "#9ca3af";

export function metricColor(t: number): string {
  if (!Number.isFinite(t)) return NO_METRIC_COLOR;
  const x = Math.min(1, Math.max(0, t)) * (STOPS.length - 1);
  const i = Math.min(STOPS.length - 2, Math.floor(x));
  const f = x - i;
  const hex = (k: number) =>
    Math.round(STOPS[i][k] + (STOPS[i + 1][k] - STOPS[i][k]) * f)
      .toString(16)
      .padStart(2, "0");
  return `#${hex(0)}${hex(1)}${hex(2)}`;
}

// A deterministic offset in -0.5..0.5 for a trial id, to spread points of one category.
export function jitter(id: number): number {
  const h = Math.imul(id ^ 0x5bd1e995, 2654435761) >>> 0;
  return (h % 1000) / 1000 - 0.5;
}

// The text for a value in tooltips.
export function formatValue(value: number | string | null): string {
  return typeof value === "number" ? formatNumber(value) : value ?? "—";
}

// What the scatter and the heat map are given: the trials, the metric, and the trials the
// brushes select (null: every trial).
export interface HpViewProps {
  trials: HpTrial[];
  metricName: string;
  smallerIsBetter: boolean;
  selected?: Set<number> | null;
}

// A label cut to `chars` characters, with an ellipsis when cut.
export const clip = (text: string, chars: number) =>
  text.length > chars ? `${text.slice(0, Math.max(1, chars - 1))}…` : text;

// The axes of the hyperparameters and, apart, the metric's (the last of axesOf).
export function splitAxes(axes: Axis[]): { hpAxes: Axis[]; metricAxis: Axis } {
  return { hpAxes: axes.slice(0, -1), metricAxis: axes[axes.length - 1] };
}
