// One experiment: its state and actions, best metric, trials, a trial's live learning curves,
// and its config.

import { useMemo, useState } from "react";
import { ExperimentActions } from "../components/Actions";
import { Chart } from "../components/Chart";
import { Badge, Empty, ErrorBox, Pending, Section, Stale } from "../components/common";
import { Table } from "../components/Table";
import { age, formatNumber, formatTime } from "../format";
import { usePoll } from "../hooks";
import { useTrialMetrics } from "../metrics";
import { buildSeries } from "../series";
import type { ExperimentDetail as Detail, Trial } from "../types";

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

export function ExperimentDetail({ id }: { id: number }) {
  const detail = usePoll<Detail>(`/api/v1/experiments/${id}`);
  const [chosen, setChosen] = useState<number | null>(null);
  if (!detail.data) return <Pending {...detail} />;
  const { experiment: e, trials, config } = detail.data;
  const best = bestOf(trials, e.metric, e.smaller_is_better);
  // The chart keeps the trial it first showed (the best then, else the first) until one is picked.
  const shown = chosen ?? best?.trial ?? trials[0]?.id ?? null;
  if (chosen === null && shown !== null && (best !== null || trials.length === 1)) {
    setChosen(shown);
  }
  const shownTrial = trials.find((t) => t.id === shown);
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
        <span data-testid="best-metric">
          best {e.metric}
          {e.smaller_is_better ? " (lowest)" : " (highest)"}:{" "}
          {best ? `${formatNumber(best.value)} (trial ${best.trial})` : "—"}
        </span>
        <ExperimentActions id={e.id} state={e.state} onDone={detail.refresh} />
      </div>
      {e.message ? <ErrorBox error={e.message} /> : null}
      <Section title="Trials">
        <Table
          testId="trials"
          rows={trials}
          rowKey={(t) => t.id}
          empty="No trials yet."
          columns={[
            {
              key: "id",
              title: "Trial",
              render: (t) => <a href={`#/trials/${t.id}`}>{t.id}</a>,
              sortValue: (t) => t.id,
            },
            { key: "state", title: "State", render: (t) => <Badge state={t.state} /> },
            { key: "task", title: "Task", render: (t) => t.task_state || "—" },
            {
              key: "steps",
              title: "Trained",
              render: (t) => t.steps_completed,
              sortValue: (t) => t.steps_completed,
            },
            {
              key: "best",
              title: `Best ${e.metric}`,
              render: (t) => formatNumber(t.best_validation?.[e.metric]),
              sortValue: (t) =>
                Number(t.best_validation?.[e.metric] ?? (e.smaller_is_better ? Infinity : -Infinity)),
            },
            { key: "restarts", title: "Restarts", render: (t) => t.restarts },
            {
              key: "hparams",
              title: "Hyperparameters",
              render: (t) => <code>{JSON.stringify(t.hparams ?? {})}</code>,
            },
            {
              key: "chart",
              title: "",
              render: (t) => (
                <button className="link" onClick={() => setChosen(t.id)} disabled={t.id === shown}>
                  {t.id === shown ? "charted" : "chart"}
                </button>
              ),
            },
          ]}
        />
      </Section>
      <Section title={shown === null ? "Learning curves" : `Learning curves: trial ${shown}`}>
        {shown === null ? (
          <Empty>No trials yet.</Empty>
        ) : (
          <LearningCurves
            trialId={shown}
            live={!ENDED.includes(shownTrial?.state ?? "") && !ENDED.includes(e.state)}
          />
        )}
      </Section>
      <Section title="Configuration">
        <pre className="config">{config}</pre>
      </Section>
    </>
  );
}
