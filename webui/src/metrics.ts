// A trial's metrics, polled incrementally (only the steps after the last one seen).

import { useEffect, useState } from "react";
import { get } from "./api";
import type { MetricPoint } from "./types";

interface Page {
  metrics: MetricPoint[];
}

export interface TrialMetrics {
  training: MetricPoint[];
  validation: MetricPoint[];
  error: string | null;
}

async function fetchAfter(trialId: number, kind: string, after: number): Promise<MetricPoint[]> {
  const query = after >= 0 ? `&after_step=${after}` : "";
  const page = await get<Page>(`/api/v1/trials/${trialId}/metrics?kind=${kind}&limit=10000${query}`);
  return page.metrics;
}

export function useTrialMetrics(trialId: number | null, intervalMs = 2000): TrialMetrics {
  const [state, setState] = useState<TrialMetrics>({ training: [], validation: [], error: null });
  useEffect(() => {
    setState({ training: [], validation: [], error: null });
    if (trialId === null) return;
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const seen = { training: -1, validation: -1 };
    const load = async () => {
      try {
        const [training, validation] = await Promise.all([
          fetchAfter(trialId, "training", seen.training),
          fetchAfter(trialId, "validation", seen.validation),
        ]);
        if (stopped) return;
        for (const p of training) seen.training = Math.max(seen.training, p.step);
        for (const p of validation) seen.validation = Math.max(seen.validation, p.step);
        if (training.length || validation.length) {
          setState((s) => ({
            training: [...s.training, ...training],
            validation: [...s.validation, ...validation],
            error: null,
          }));
        }
      } catch (e) {
        if (!stopped) setState((s) => ({ ...s, error: (e as Error).message }));
      } finally {
        if (!stopped) timer = setTimeout(load, intervalMs);
      }
    };
    void load();
    return () => {
      stopped = true;
      if (timer) clearTimeout(timer);
    };
  }, [trialId, intervalMs]);
  return state;
}

// The searcher's metric and its direction, read from the experiment's YAML.
export function searcherMetric(configYaml: string): { metric: string; smallerIsBetter: boolean } {
  const metric = /^\s*metric:\s*["']?([\w.\-/]+)/m.exec(configYaml)?.[1] ?? "";
  const smaller = /^\s*smaller_is_better:\s*(true|false)/m.exec(configYaml)?.[1];
  return { metric, smallerIsBetter: smaller !== "false" };
}
