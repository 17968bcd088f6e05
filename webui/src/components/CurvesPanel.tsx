// Many trials' curves of one chosen metric on one chart: the metric picker (validation metrics
// first, the searcher's first of all), a smoothing slider, a log scale and the overlay chart. The caller
// owns the choice (it decides what to read) and the highlighted trial (shared with its table).

import { useMemo, useState } from "react";
import { choiceKey, parseChoice, type MetricChoice } from "../curves";
import type { Curve } from "../overlay";
import { OverlayChart } from "./OverlayChart";
import { Empty, Loading } from "./common";

// A curve's values as their base-10 logarithms (a value <= 0 becomes NaN: a gap in the line).
export function logCurve(curve: Curve): Curve {
  return { ...curve, values: curve.values.map((v) => (v > 0 ? Math.log10(v) : NaN)) };
}

export function CurvesPanel({ trials, loading, choices, choice, onChoice, curves, highlight, onHover, empty }: {
  trials: number; // how many trials could have reported
  loading: boolean; // the chosen metric's curves are on their way: `curves` are the last choice's
  choices: MetricChoice[];
  choice: MetricChoice;
  onChoice: (choice: MetricChoice) => void;
  curves: Curve[];
  highlight: number | null;
  onHover: (id: number | null) => void;
  empty: string;
}) {
  const [smoothing, setSmoothing] = useState(0);
  const [log, setLog] = useState(false);
  const listed = choices.some((c) => choiceKey(c) === choiceKey(choice)) ? choices : [choice, ...choices];
  const reported = useMemo(() => curves.filter((c) => c.steps.length > 0), [curves]);
  const drawn = useMemo(() => (log ? reported.map(logCurve) : reported), [reported, log]);
  return (
    <div className="curves-panel">
      <div className="filters">
        <label>
          Metric{" "}
          <select
            name="metric"
            value={choiceKey(choice)}
            onChange={(e) => onChoice(parseChoice(e.target.value))}
          >
            {listed.map((c) => (
              <option key={choiceKey(c)} value={choiceKey(c)}>
                {c.name} ({c.group})
              </option>
            ))}
          </select>
        </label>
        <label>
          Smoothing{" "}
          <input
            type="range"
            name="smoothing"
            min={0}
            max={0.99}
            step={0.01}
            value={smoothing}
            onChange={(e) => setSmoothing(Number(e.target.value))}
          />{" "}
          <span className="muted">{smoothing.toFixed(2)}</span>
        </label>
        <label>
          <input type="checkbox" name="log-scale" checked={log} onChange={(e) => setLog(e.target.checked)} />{" "}
          log scale
        </label>
        <span className="muted">
          {loading ? `reading ${choice.name}…` : `${drawn.length} of ${trials} trials reported ${choice.name}`}
        </span>
      </div>
      {loading ? (
        <Loading />
      ) : drawn.length === 0 ? (
        <>
          <Empty>{empty}</Empty>
          <div data-testid="overlay-chart" data-curves={0} />
        </>
      ) : (
        <OverlayChart
          curves={drawn}
          smoothing={smoothing}
          highlight={highlight}
          onHover={onHover}
          xLabel="batches"
          yLabel={log ? `log10 ${choice.name}` : choice.name}
        />
      )}
    </div>
  );
}
