// Data that refreshes: a GET polled every `intervalMs` while the page shows it.

import { useCallback, useEffect, useRef, useState } from "react";
import { get } from "./api";

export interface Polled<T> {
  data: T | null;
  error: string | null;
  loading: boolean; // no answer yet
  refresh: () => void;
}

export function usePoll<T>(path: string | null, intervalMs = 2000): Polled<T> {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [tick, setTick] = useState(0);
  const generation = useRef(0);

  useEffect(() => {
    setData(null);
    setLoading(true);
    setError(null);
  }, [path]);

  useEffect(() => {
    if (!path) return;
    const mine = ++generation.current;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const load = async () => {
      try {
        const answer = await get<T>(path);
        if (generation.current !== mine) return;
        setData(answer);
        setError(null);
      } catch (e) {
        if (generation.current !== mine) return;
        setError((e as Error).message);
      } finally {
        if (generation.current === mine) {
          setLoading(false);
          timer = setTimeout(load, intervalMs);
        }
      }
    };
    void load();
    return () => {
      generation.current++;
      if (timer) clearTimeout(timer);
    };
  }, [path, intervalMs, tick]);

  const refresh = useCallback(() => setTick((t) => t + 1), []);
  return { data, error, loading, refresh };
}
