// A task's log, followed live (the master streams it as NDJSON until the task ends). A dropped
// stream is picked up again after the last line received, with a growing pause (1 s to 30 s).

import { useEffect, useRef, useState } from "react";
import { ApiError, followLogs, type LogLine } from "../api";

type State = "following" | "reconnecting" | "ended" | "error";

export function Logs({ taskId }: { taskId: string }) {
  const [lines, setLines] = useState<LogLine[]>([]);
  const [state, setState] = useState<State>("following");
  const [error, setError] = useState("");
  const [stick, setStick] = useState(true);
  const box = useRef<HTMLPreElement>(null);

  useEffect(() => {
    setLines([]);
    setState("following");
    const abort = new AbortController();
    const batch: LogLine[] = [];
    let flush: ReturnType<typeof setTimeout> | undefined;
    let lastId = 0;
    const received = (line: LogLine) => {
      lastId = line.id;
      batch.push(line);
      flush ??= setTimeout(() => {
        flush = undefined;
        const taken = batch.splice(0);
        setLines((all) => [...all, ...taken].slice(-5000));
      }, 100);
    };
    const follow = async () => {
      for (let pause = 1000; !abort.signal.aborted; pause = Math.min(pause * 2, 30000)) {
        try {
          setState("following");
          await followLogs(taskId, lastId, received, abort.signal);
          setState("ended");
          return;
        } catch (e) {
          if (abort.signal.aborted) return;
          const refused = e instanceof ApiError && e.status >= 400 && e.status < 500;
          setError((e as Error).message);
          if (refused) {
            setState("error");  // 401, 403, 404: trying again would not help
            return;
          }
          setState("reconnecting");
          await new Promise((resolve) => setTimeout(resolve, pause));
        }
      }
    };
    void follow();
    return () => {
      abort.abort();
      if (flush) clearTimeout(flush);
    };
  }, [taskId]);

  useEffect(() => {
    if (stick && box.current) box.current.scrollTop = box.current.scrollHeight;
  }, [lines, stick]);

  // Scrolling up to read stops following; scrolling back to the end follows again.
  const scrolled = () => {
    const el = box.current;
    if (!el) return;
    setStick(el.scrollHeight - el.scrollTop - el.clientHeight < 8);
  };

  const status = {
    following: "following…",
    reconnecting: `connection lost (${error}); trying again…`,
    ended: "task ended",
    error,
  }[state];
  return (
    <div>
      <div className="log-bar">
        <span className={state === "error" ? "error" : "muted"}>{status}</span>
        <label>
          <input type="checkbox" checked={stick} onChange={(e) => setStick(e.target.checked)} />{" "}
          follow
        </label>
      </div>
      <pre className="logs" ref={box} data-testid="logs" onScroll={scrolled}>
        {lines.length === 0 && state !== "following" ? "No log lines." : null}
        {lines.map((line) => (
          <div key={line.id} className={line.stdtype === "stderr" ? "stderr" : undefined}>
            {line.log}
          </div>
        ))}
      </pre>
    </div>
  );
}
