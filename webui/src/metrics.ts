// A trial's metrics, polled incrementally (only the steps after the last one seen) while it
// may still report; a trial that ended is read once.

import { useEffect, useRef, useState } from "react";
import { get } from "./api";
import { every } from "./hooks";
import type { MetricPoint } from "./types";

interface Page {
  metrics: MetricPoint[];
}

export interface TrialMetrics {
  training: MetricPoint[];
  validation: MetricPoint[];
  error: string | null; // why the latest poll failed (the points so far stay)
}

async function fetchAfter(trialId: number, kind: string, after: number): Promise<MetricPoint[]> {
  const query = after >= 0 ? `&after_step=${after}` : "";
  const page = await get<Page>(`/api/v1/trials/${trialId}/metrics?kind=${kind}&limit=10000${query}`);
  return page.metrics;
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
          training: training.length ? [...s.training, ...training] : s.training,
          validation: validation.length ? [...s.validation, ...validation] : s.validation,
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
