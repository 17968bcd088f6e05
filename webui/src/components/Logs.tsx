// A task's log, followed live (the master streams it as NDJSON until the task ends).

import { useEffect, useRef, useState } from "react";
import { followLogs, type LogLine } from "../api";

export function Logs({ taskId }: { taskId: string }) {
  const [lines, setLines] = useState<LogLine[]>([]);
  const [state, setState] = useState<"following" | "ended" | "error">("following");
  const [error, setError] = useState("");
  const [stick, setStick] = useState(true);
  const box = useRef<HTMLPreElement>(null);

  useEffect(() => {
    setLines([]);
    setState("following");
    const abort = new AbortController();
    const batch: LogLine[] = [];
    let flush: ReturnType<typeof setTimeout> | undefined;
    followLogs(
      taskId,
      (line) => {
        batch.push(line);
        flush ??= setTimeout(() => {
          flush = undefined;
          const taken = batch.splice(0);
          setLines((all) => [...all, ...taken].slice(-5000));
        }, 100);
      },
      abort.signal,
    )
      .then(() => setState("ended"))
      .catch((e: Error) => {
        if (abort.signal.aborted) return;
        setError(e.message);
        setState("error");
      });
    return () => {
      abort.abort();
      if (flush) clearTimeout(flush);
    };
  }, [taskId]);

  useEffect(() => {
    if (stick && box.current) box.current.scrollTop = box.current.scrollHeight;
  }, [lines, stick]);

  return (
    <div>
      <div className="log-bar">
        <span className="muted">
          {state === "following" ? "following…" : state === "ended" ? "task ended" : error}
        </span>
        <label>
          <input type="checkbox" checked={stick} onChange={(e) => setStick(e.target.checked)} />{" "}
          follow
        </label>
      </div>
      <pre className="logs" ref={box} data-testid="logs">
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
