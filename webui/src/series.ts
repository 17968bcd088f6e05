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
