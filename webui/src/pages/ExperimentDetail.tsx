// One experiment: its state and actions, best metric, every trial's learning curves on one
// chart, the hyperparameter views (parallel coordinates to brush, scatter, heat map), the trials
// (filtered by the brushes and by column, checked for the compare page), one trial's training
// and validation curves, and its config. Hovering a trial anywhere highlights it everywhere.

import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { ExperimentActions } from "../components/Actions";
import { Chart } from "../components/Chart";
import { CurvesPanel } from "../components/CurvesPanel";
import { Badge, Empty, ErrorBox, Loading, Pending, Section, Stale } from "../components/common";
import { HpHeatMap } from "../components/HpHeatMap";
import { HpScatter } from "../components/HpScatter";
import { ParallelCoordinates } from "../components/ParallelCoordinates";
import { TrialsTable } from "../components/TrialsTable";
import { choicesOf, curvesOfSeries, type MetricChoice, type SeriesAnswer } from "../curves";
import { age, formatBytes, formatNumber, formatTime } from "../format";
import { axesOf, brushed, type Brushes, type HpTrial } from "../hparams";
import { usePoll } from "../hooks";
import { useTrialMetrics } from "../metrics";
import { buildSeries } from "../series";
import { experimentDetailView, type ApiExperimentDetail } from "../determined";
import type { Experiment, Trial } from "../types";

const ENDED = ["COMPLETED", "CANCELED", "ERROR"];

function bestOf(trials: Trial[], metric: string, smallerIsBetter: boolean) {
  let found: { trial: number; value: number } | null = null;
  for (const trial of trials) {
    const value = trial.best_validation?.[metric];
    if (typeof value !== "number") continue;
    if (!found || (smallerIsBetter ? value < found.value : value > found.value)) {
      found = { trial: trial.id, value };
    }
  }
  return found;
}

// A trial's learning curves, filling in while it runs (`live`).
export function LearningCurves({ trialId, live }: { trialId: number; live: boolean }) {
  const metrics = useTrialMetrics(trialId, live);
  const series = useMemo(
    () => buildSeries(metrics.training, metrics.validation),
    [metrics.training, metrics.validation],
  );
  return (
    <>
      {metrics.error ? <ErrorBox error={`Cannot read the metrics: ${metrics.error}`} /> : null}
      {series.steps.length === 0 ? (
        <>
          <Empty>
            {live
              ? "No metrics reported yet: the chart fills in as the trial trains."
              : "This trial reported no metrics."}
          </Empty>
          <div data-testid="learning-curve" data-points={0} />
        </>
      ) : (
        <Chart series={series} />
      )}
    </>
  );
}

// Values per curve the overlay asks for: a few per pixel of a wide chart, light for 500 trials.
const OVERLAY_POINTS = 300;

// The master shares a curves read among its pollers for up to 2 s (metric_series_routes), so the
// read that follows an experiment's end may predate its last reports: when `live` turns false,
// read once more after that window, then no more until the slow poll.
const SHARED_READ_MS = 2000;
function useReadAgainAfterTheEnd(live: boolean, refresh: () => void) {
  const wasLive = useRef(live);
  useEffect(() => {
    if (live) {
      wasLive.current = true;
      return;
    }
    if (!wasLive.current) return;
    wasLive.current = false;
    const timer = setTimeout(refresh, SHARED_READ_MS + 500);
    return () => clearTimeout(timer);
  }, [live, refresh]);
}

// Every trial's curve of the chosen metric, polled while the experiment runs.
function AllTrialsCurves({ e, trialCount, live, highlight, onHover, onShown }: {
  e: Experiment;
  trialCount: number;
  live: boolean;
  highlight: number | null;
  onHover: (id: number | null) => void;
  onShown: () => void; // the first answer (or error) is on screen
}) {
  const [choice, setChoice] = useState<MetricChoice>({ group: "validation", name: e.metric });
  const path =
    `/api/v1/experiments/${e.id}/metrics-series?group=${encodeURIComponent(choice.group)}` +
    `&name=${encodeURIComponent(choice.name)}&maxPoints=${OVERLAY_POINTS}`;
  const answer = usePoll<SeriesAnswer>(path, live ? 5000 : 600_000);  // 500 trials: 0.2 s of master
  useReadAgainAfterTheEnd(live, answer.refresh);
  const curves = useMemo(
    () => (answer.data ? curvesOfSeries(answer.data, choice.name) : []),
    [answer.data, choice.name],
  );
  const answered = answer.data !== null || answer.error !== null;
  useEffect(() => {
    if (!answered) return;
    // After the frame that draws the chart (its own animation frame comes first).
    let timer: ReturnType<typeof setTimeout> | undefined;
    const frame = requestAnimationFrame(() => (timer = setTimeout(onShown, 0)));
    return () => {
      cancelAnimationFrame(frame);
      if (timer) clearTimeout(timer);
    };
  }, [answered, onShown]);
  if (!answer.data) return <Pending {...answer} />;
  return (
    <CurvesPanel
      trials={trialCount}
      loading={answer.dataPath !== path}
      choices={choicesOf(answer.data.names, e.metric)}
      choice={choice}
      onChoice={setChoice}
      curves={curves}
      highlight={highlight}
      onHover={onHover}
      empty={live ? "No trial has reported this metric yet." : "No trial reported this metric."}
    />
  );
}

function HyperparameterViews({ trials, e, brushes, onBrush, selected, highlight, onHover }: {
  trials: HpTrial[];
  e: Experiment;
  brushes: Brushes;
  onBrush: (b: Brushes) => void;
  selected: Set<number> | null; // what the brushes select
  highlight: number | null;
  onHover: (id: number | null) => void;
}) {
  return (
    <>
      <ParallelCoordinates
        trials={trials}
        metricName={e.metric}
        smallerIsBetter={e.smaller_is_better}
        brushes={brushes}
        onBrush={onBrush}
        highlight={highlight}
        onHover={onHover}
      />
      <div className="hp-pair">
        <HpScatter trials={trials} metricName={e.metric} smallerIsBetter={e.smaller_is_better} selected={selected} />
        <HpHeatMap trials={trials} metricName={e.metric} smallerIsBetter={e.smaller_is_better} selected={selected} />
      </div>
    </>
  );
}

export function ExperimentDetail({ id }: { id: number }) {
  const detail = usePoll<ApiExperimentDetail>(`/api/v1/experiments/${id}`);
  const view = useMemo(() => (detail.data ? experimentDetailView(detail.data) : null), [detail.data]);
  const [chosen, setChosen] = useState<number | null>(null);
  const [highlight, setHighlight] = useState<number | null>(null);
  const [brushes, setBrushes] = useState<Brushes>({});
  const [settled, setSettled] = useState(false);
  const trials = view?.trials;
  const metric = view?.experiment.metric ?? "";
  const hpTrials = useMemo<HpTrial[]>(
    () =>
      (trials ?? []).map((t) => {
        const value = t.best_validation?.[metric];
        return { id: t.id, hparams: t.hparams ?? {}, metric: typeof value === "number" ? value : null };
      }),
    [trials, metric],
  );
  const within = useMemo(
    () => (Object.keys(brushes).length ? brushed(hpTrials, axesOf(hpTrials, metric), brushes, metric) : null),
    [hpTrials, brushes, metric],
  );
  // The page first draws the summary and every trial's curves; the views of every trial
  // (hundreds of rows and lines) follow once the curves are on screen (or after 2 s, or at once
  // without trials), so they neither hold back the curves' read nor their drawing.
  const hasData = view !== null;
  const noTrials = (trials?.length ?? 0) === 0;
  const settle = useCallback(() => setSettled(true), []);
  useEffect(() => {
    if (!hasData || settled) return;
    const timer = setTimeout(settle, noTrials ? 0 : 2000);
    return () => clearTimeout(timer);
  }, [hasData, settled, noTrials, settle]);
  if (!view) return <Pending {...detail} />;
  const { experiment: e, config } = view;
  const all = view.trials;
  const best = bestOf(all, e.metric, e.smaller_is_better);
  // The one-trial chart keeps the trial it first showed (the best then, else the first) until one
  // is picked.
  const shown = chosen ?? best?.trial ?? all[0]?.id ?? null;
  if (chosen === null && shown !== null && (best !== null || all.length === 1)) {
    setChosen(shown);
  }
  const shownTrial = all.find((t) => t.id === shown);
  const live = !ENDED.includes(e.state);
  return (
    <>
      <h1>
        Experiment {e.id} <small className="muted">{e.name}</small>
      </h1>
      <Stale error={detail.error} updatedAt={detail.updatedAt} />
      <div className="summary">
        <Badge state={e.state} />
        <span>owner {e.owner || "—"}</span>
        <span>searcher {e.searcher}</span>
        <span>pool {e.resource_pool || "default"}</span>
        <span>started {formatTime(e.start_at)}</span>
        <span>duration {age(e.start_at, e.end_at)}</span>
        <span>{Math.round(e.progress * 100)}% done</span>
        <span data-testid="checkpoint-totals" title="its checkpoints that still have files: what checkpoint_storage's save_* kept and the model registry holds">
          {e.checkpoint_count} checkpoints · {formatBytes(e.checkpoint_bytes)}
        </span>
        <span className="muted" data-testid="checkpoint-policy">
          kept: the experiment's best {e.checkpoint_policy.experiment_best}, each trial's best{" "}
          {e.checkpoint_policy.trial_best} and latest {e.checkpoint_policy.trial_latest}, and any a
          model registers
        </span>
        <span data-testid="best-metric">
          best {e.metric}
          {e.smaller_is_better ? " (lowest)" : " (highest)"}:{" "}
          {best ? `${formatNumber(best.value)} (trial ${best.trial})` : "—"}
        </span>
        <ExperimentActions id={e.id} state={e.state} onDone={detail.refresh} />
      </div>
      {e.message ? <ErrorBox error={e.message} /> : null}
      <Section title="Learning curves: all trials">
        {all.length === 0 ? (
          <Empty>No trials yet.</Empty>
        ) : (
          <AllTrialsCurves
            e={e}
            trialCount={all.length}
            live={e.state === "ACTIVE"}
            highlight={highlight}
            onHover={setHighlight}
            onShown={settle}
          />
        )}
      </Section>
      {!settled ? (
        <Loading />
      ) : all.length > 1 ? (
        <Section title="Hyperparameters">
          <HyperparameterViews
            trials={hpTrials}
            e={e}
            brushes={brushes}
            onBrush={setBrushes}
            selected={within}
            highlight={highlight}
            onHover={setHighlight}
          />
        </Section>
      ) : null}
      {settled ? (
        <Section title="Trials">
          <TrialsTable
            trials={all}
            metric={e.metric}
            smallerIsBetter={e.smaller_is_better}
            within={within}
            highlight={highlight}
            onHover={setHighlight}
            charted={shown}
            onChart={setChosen}
          />
        </Section>
      ) : null}
      <Section title={shown === null ? "Learning curves" : `Learning curves: trial ${shown}`}>
        {shown === null ? (
          <Empty>No trials yet.</Empty>
        ) : (
          <LearningCurves trialId={shown} live={!ENDED.includes(shownTrial?.state ?? "") && live} />
        )}
      </Section>
      <Section title="Configuration">
        <pre className="config">{config}</pre>
      </Section>
    </>
  );
}
