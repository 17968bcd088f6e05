// Learning curves: metric points (step, {name: value}) as uPlot's column data.

import type { MetricPoint } from "./types";

export interface Curve {
  label: string; // "training loss", "validation validation_loss"
  kind: "training" | "validation";
  metric: string;
}

export interface Series {
  steps: number[]; // x, ascending, each once
  curves: Curve[];
  values: (number | null)[][]; // one column per curve, aligned with steps (null: no point)
}

// Keys that count how far training got rather than measure it (Determined's units).
const UNITS = new Set(["batches", "epochs", "records"]);

// The numeric metrics of both kinds, on one step axis. Later runs of a step (a trial resumed
// from its checkpoint reports some steps again) replace earlier ones.
export function buildSeries(training: MetricPoint[], validation: MetricPoint[]): Series {
  const byKind = { training, validation };
  const curves: Curve[] = [];
  const points = new Map<string, Map<number, number>>();
  const steps = new Set<number>();
  for (const kind of ["training", "validation"] as const) {
    for (const point of byKind[kind]) {
      for (const [metric, value] of Object.entries(point.metrics ?? {})) {
        if (typeof value !== "number" || !Number.isFinite(value) || UNITS.has(metric)) continue;
        const key = `${kind} ${metric}`;
        if (!points.has(key)) {
          points.set(key, new Map());
          curves.push({ label: key, kind, metric });
        }
        points.get(key)!.set(point.step, value);
        steps.add(point.step);
      }
    }
  }
  const sorted = [...steps].sort((a, b) => a - b);
  const values = curves.map((curve) =>
    sorted.map((step) => points.get(curve.label)!.get(step) ?? null),
  );
  return { steps: sorted, curves, values };
}

// The best value of `metric` among validation points (smaller is better unless told).
export function best(
  validation: MetricPoint[],
  metric: string,
  smallerIsBetter = true,
): { step: number; value: number } | null {
  let found: { step: number; value: number } | null = null;
  for (const point of validation) {
    const value = point.metrics?.[metric];
    if (typeof value !== "number") continue;
    if (!found || (smallerIsBetter ? value < found.value : value > found.value)) {
      found = { step: point.step, value };
    }
  }
  return found;
}

// Points cut down to about `maxPoints` values per metric the way the master downsamples: per
// metric, the lowest and highest value in each of maxPoints / 2 equal step ranges, and the first
// and last points whole. Keeps a live chart bounded however long the trial reports; points
// are returned by step.
export function decimate(points: MetricPoint[], maxPoints: number): MetricPoint[] {
  if (points.length <= maxPoints) return points;
  const sorted = [...points].sort((a, b) => a.step - b.step);
  const first = sorted[0].step;
  const span = sorted[sorted.length - 1].step - first + 1;
  const ranges = Math.max(1, Math.floor(maxPoints / 2));
  type Extreme = { step: number; value: number };
  const kept = new Map<string, { low: Extreme; high: Extreme }>(); // by "range metric"
  for (const point of sorted) {
    const range = Math.min(ranges - 1, Math.floor(((point.step - first) * ranges) / span));
    for (const [metric, value] of Object.entries(point.metrics ?? {})) {
      if (typeof value !== "number" || !Number.isFinite(value)) continue;
      const key = `${range} ${metric}`;
      const e = kept.get(key);
      if (!e) {
        kept.set(key, { low: { step: point.step, value }, high: { step: point.step, value } });
        continue;
      }
      if (value < e.low.value) e.low = { step: point.step, value };
      if (value > e.high.value) e.high = { step: point.step, value };
    }
  }
  const bySteps = new Map<number, MetricPoint>();
  const at = (step: number, run_id = 0) => {
    if (!bySteps.has(step)) bySteps.set(step, { step, run_id, metrics: {} });
    return bySteps.get(step)!;
  };
  for (const end of [sorted[0], sorted[sorted.length - 1]]) {
    Object.assign(at(end.step, end.run_id).metrics, end.metrics);
  }
  for (const [key, e] of kept) {
    const metric = key.slice(key.indexOf(" ") + 1);
    at(e.low.step).metrics[metric] = e.low.value;
    at(e.high.step).metrics[metric] = e.high.value;
  }
  return [...bySteps.values()].sort((a, b) => a.step - b.step);
}
