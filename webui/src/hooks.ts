// Data that refreshes: a GET polled every `intervalMs` while the page shows it (a hidden tab
// polls no more until it shows again).

import { useCallback, useEffect, useRef, useState } from "react";
import { get } from "./api";

export interface Polled<T> {
  data: T | null; // the latest answer (kept while a new path loads, and after a failed poll)
  dataPath: string | null; // the path `data` answers (another while a new path loads)
  error: string | null; // why the latest poll failed, if it did
  loading: boolean; // no answer yet for this path
  updatedAt: number | null; // when `data` came (ms)
  refresh: () => void;
}

// Calls `load` now and then every `intervalMs` after each call ends, skipping while the page is
// hidden; stops when the returned function is called.
export function every(intervalMs: number, load: () => Promise<void>): () => void {
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const run = async () => {
    if (stopped) return;
    if (typeof document === "undefined" || !document.hidden) await load();
    if (!stopped) timer = setTimeout(run, intervalMs);
  };
  void run();
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
  };
}

export function usePoll<T>(path: string | null, intervalMs = 2000): Polled<T> {
  const [data, setData] = useState<T | null>(null);
  const [dataPath, setDataPath] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [updatedAt, setUpdatedAt] = useState<number | null>(null);
  const [tick, setTick] = useState(0);
  const generation = useRef(0);

  useEffect(() => {
    if (!path) return;
    const mine = ++generation.current;
    setLoading(true);
    const stop = every(intervalMs, async () => {
      try {
        const answer = await get<T>(path);
        if (generation.current !== mine) return;
        setData(answer);
        setDataPath(path);
        setError(null);
        setUpdatedAt(Date.now());
      } catch (e) {
        if (generation.current === mine) setError((e as Error).message);
      } finally {
        if (generation.current === mine) setLoading(false);
      }
    });
    return () => {
      generation.current++;
      stop();
    };
  }, [path, intervalMs, tick]);

  const refresh = useCallback(() => setTick((t) => t + 1), []);
  return { data, dataPath, error, loading, updatedAt, refresh };
}

// A value that follows `value` once it has stopped changing for `delayMs` (typing in a filter).
export function useDebounced<T>(value: T, delayMs = 300): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), delayMs);
    return () => clearTimeout(timer);
  }, [value, delayMs]);
  return settled;
}
