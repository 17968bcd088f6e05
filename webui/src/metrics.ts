// A trial's metrics, polled incrementally (only the steps after the last one seen) while it
// may still report; a trial that ended is read once. Each read asks for at most MAX_POINTS
// values per metric (the master downsamples a longer curve to its extremes), and what is held
// is decimated the same way once it passes 4 x MAX_POINTS: a 1M-point curve draws as quickly
// as a short one, and a week-long live view stays bounded.

import { useEffect, useRef, useState } from "react";
import { get } from "./api";
import { every } from "./hooks";
import { decimate } from "./series";
import type { MetricPoint } from "./types";

// GET /api/v1/trials/{id}/metrics.
interface Page {
  metrics: { step: number; runId: number; metrics: Record<string, unknown> }[];
}

// About two values per pixel of a wide chart.
export const MAX_POINTS = 2000;

function bounded(points: MetricPoint[]): MetricPoint[] {
  return points.length > 4 * MAX_POINTS ? decimate(points, MAX_POINTS) : points;
}

export interface TrialMetrics {
  training: MetricPoint[];
  validation: MetricPoint[];
  error: string | null; // why the latest poll failed (the points so far stay)
}

async function fetchAfter(trialId: number, kind: string, after: number): Promise<MetricPoint[]> {
  const query = after >= 0 ? `&afterStep=${after}` : "";
  const page = await get<Page>(
    `/api/v1/trials/${trialId}/metrics?kind=${kind}&maxPoints=${MAX_POINTS}${query}`,
  );
  return page.metrics.map((p) => ({ step: p.step, run_id: p.runId, metrics: p.metrics }));
}

export function useTrialMetrics(trialId: number | null, live: boolean, intervalMs = 2000): TrialMetrics {
  const [state, setState] = useState<TrialMetrics>({ training: [], validation: [], error: null });
  // The last step of each kind already held, for this trial (kept when `live` changes).
  const seen = useRef({ trial: trialId, training: -1, validation: -1 });
  useEffect(() => {
    if (trialId === null) return;
    if (seen.current.trial !== trialId) {
      seen.current = { trial: trialId, training: -1, validation: -1 };
      setState({ training: [], validation: [], error: null });
    }
    let stopped = false;
    let done = false;
    const stop = every(intervalMs, async () => {
      if (done) return;
      try {
        const [training, validation] = await Promise.all([
          fetchAfter(trialId, "training", seen.current.training),
          fetchAfter(trialId, "validation", seen.current.validation),
        ]);
        if (stopped) return;
        for (const p of training) seen.current.training = Math.max(seen.current.training, p.step);
        for (const p of validation) {
          seen.current.validation = Math.max(seen.current.validation, p.step);
        }
        setState((s) => ({
          training: training.length ? bounded([...s.training, ...training]) : s.training,
          validation: validation.length ? bounded([...s.validation, ...validation]) : s.validation,
          error: null,
        }));
        done = !live;  // an ended trial reports nothing more
      } catch (e) {
        if (!stopped) setState((s) => ({ ...s, error: (e as Error).message }));
      }
    });
    return () => {
      stopped = true;
      stop();
    };
  }, [trialId, live, intervalMs]);
  return state;
}
