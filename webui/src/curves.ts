// Many trials' curves of one metric, as the master's overlay reads answer them
// (GET /api/v1/experiments/{id}/metrics-series and Determined's /api/v1/trials/time-series),
// turned into the overlay chart's curves; and the metric choices a chart offers.

import type { ApiTrial } from "./determined";
import type { Curve } from "./overlay";

export interface SeriesAnswer {
  experimentId: number;
  group: string;
  names: Record<string, string[]>; // group -> numeric metric names the trials' latest points have
  series: { trialId: number; name: string; steps: number[]; values: number[]; downsampled: boolean }[];
}

// Determined's CompareTrials answer.
export interface TimeSeriesAnswer {
  trials: {
    trial: ApiTrial;
    metrics: { group: string; data: { batches: number; time?: string; values: Record<string, unknown> }[] }[];
  }[];
}

// A chart's choice: a group and a metric name ("validation" / "loss").
export interface MetricChoice {
  group: string;
  name: string;
}

export const choiceKey = (c: MetricChoice) => `${c.group}:${c.name}`;

export function parseChoice(key: string): MetricChoice {
  const at = key.indexOf(":");
  return { group: key.slice(0, at), name: key.slice(at + 1) };
}

// Validation metrics first (the searcher's first of all), then training ones.
export function choicesOf(names: Record<string, string[]>, searcherMetric: string): MetricChoice[] {
  const choices: MetricChoice[] = [];
  for (const group of ["validation", "training"]) {
    const list = [...(names[group] ?? [])].sort((a, b) =>
      a === searcherMetric ? -1 : b === searcherMetric ? 1 : a.localeCompare(b),
    );
    for (const name of list) choices.push({ group, name });
  }
  return choices;
}

export function curvesOfSeries(answer: SeriesAnswer, name: string): Curve[] {
  return answer.series
    .filter((s) => s.name === name)
    .map((s) => ({ id: s.trialId, label: `trial ${s.trialId}`, steps: s.steps, values: s.values }));
}

export function curvesOfTimeSeries(answer: TimeSeriesAnswer, name: string): Curve[] {
  return answer.trials.map(({ trial, metrics }) => {
    const steps: number[] = [];
    const values: number[] = [];
    for (const point of metrics[0]?.data ?? []) {
      const value = point.values[name];
      if (typeof value !== "number") continue;
      steps.push(point.batches);
      values.push(value);
    }
    return { id: trial.id, label: `trial ${trial.id} (experiment ${trial.experimentId})`, steps, values };
  });
}
