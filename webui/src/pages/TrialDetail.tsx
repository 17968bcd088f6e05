// One trial: its state, hyperparameters, learning curves, checkpoints (each registrable in the model
// registry) and logs (each run's: a trial resumed after a failure or a pause runs again as a new
// task).

import { useState } from "react";
import { Badge, Pending, Section, Stale } from "../components/common";
import { Logs } from "../components/Logs";
import { Table } from "../components/Table";
import { age, formatBytes } from "../format";
import { usePoll } from "../hooks";
import { RegisterCheckpoint } from "../components/RegisterCheckpoint";
import { checkpointView, trialView, type ApiCheckpoint, type ApiModel, type ApiTrial } from "../determined";
import type { Trial } from "../types";
import { LearningCurves } from "./ExperimentDetail";

const ENDED = ["COMPLETED", "CANCELED", "ERROR"];

function RunLogs({ trial }: { trial: Trial }) {
  const [run, setRun] = useState<number | null>(null);
  if (trial.run_id <= 0) return <p className="muted">Not started yet.</p>;
  const shown = run ?? trial.run_id;  // the latest run unless one was picked
  const runs = Array.from({ length: trial.run_id }, (_, i) => i + 1);
  return (
    <>
      {runs.length > 1 ? (
        <div className="filters">
          <label>
            Run{" "}
            <select
              name="run"
              value={shown}
              onChange={(e) => setRun(Number(e.target.value))}
            >
              {runs.map((r) => (
                <option key={r} value={r}>
                  {r}
                  {r === trial.run_id ? " (latest)" : ""}
                </option>
              ))}
            </select>
          </label>
        </div>
      ) : null}
      <Logs taskId={`trial-${trial.id}-${shown}`} key={shown} />
    </>
  );
}

function Checkpoints({ trialId }: { trialId: number }) {
  const [showDeleted, setShowDeleted] = useState(false);
  const list = usePoll<{ checkpoints: ApiCheckpoint[] }>(
    `/api/v1/trials/${trialId}/checkpoints`,  // its own only: no other trial's validations read
    5000,
  );
  // The models a checkpoint may be registered in (unarchived, by name).
  const models = usePoll<{ models: ApiModel[] }>(
    "/api/v1/models?archived=false&sortBy=SORT_BY_NAME&limit=500",
    30_000,
  );
  const modelNames = (models.data?.models ?? []).map((m) => m.name);
  if (!list.data) return <Pending {...list} />;
  const mine = list.data.checkpoints.map(checkpointView);
  const kept = mine.filter((c) => showDeleted || c.state !== "DELETED");
  return (
    <>
      <div className="filters">
        <span className="muted">
          {kept.length} shown of {mine.length} (the experiment's checkpoint policy deletes the rest)
        </span>
        <label>
          <input
            type="checkbox"
            checked={showDeleted}
            onChange={(e) => setShowDeleted(e.target.checked)}
          />{" "}
          show deleted ones
        </label>
      </div>
      <Table
        testId="checkpoints"
        rows={kept}
        rowKey={(c) => c.uuid}
        empty="No checkpoints yet."
        columns={[
          { key: "uuid", title: "UUID", render: (c) => <code>{c.uuid}</code> },
          {
            key: "steps",
            title: "Trained",
            render: (c) => c.steps_completed,
            sortValue: (c) => c.steps_completed,
          },
          { key: "state", title: "State", render: (c) => <Badge state={c.state} /> },
          {
            key: "size",
            title: "Size",
            render: (c) => formatBytes(c.size_bytes),
            sortValue: (c) => c.size_bytes,
          },
          {
            key: "register",
            title: "Model registry",
            render: (c) =>
              c.state === "COMPLETED" || c.state === "PARTIALLY_DELETED" ? (
                <RegisterCheckpoint uuid={c.uuid} models={modelNames} />
              ) : null,
          },
        ]}
      />
    </>
  );
}

export function TrialDetail({ id }: { id: number }) {
  const trial = usePoll<{ trial: ApiTrial }>(`/api/v1/trials/${id}`);
  if (!trial.data) return <Pending {...trial} />;
  const t = trialView(trial.data.trial);
  return (
    <>
      <h1>
        Trial {t.id}{" "}
        <small className="muted">
          of <a href={`#/experiments/${t.experiment_id}`}>experiment {t.experiment_id}</a>
        </small>
      </h1>
      <Stale error={trial.error} updatedAt={trial.updatedAt} />
      <div className="summary">
        <Badge state={t.state} />
        <span>task {t.task_state || "—"}</span>
        <span>run {t.run_id}</span>
        <span>restarts {t.restarts}</span>
        <span>trained {t.steps_completed}</span>
        <span>duration {age(t.start_at, t.end_at)}</span>
      </div>
      <Section title="Hyperparameters">
        <table className="kv">
          <tbody>
            {Object.entries(t.hparams ?? {}).map(([name, value]) => (
              <tr key={name}>
                <th>{name}</th>
                <td>{typeof value === "string" ? value : JSON.stringify(value)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </Section>
      <Section title="Learning curves">
        <LearningCurves trialId={t.id} live={!ENDED.includes(t.state)} />
      </Section>
      <Section title="Checkpoints">
        <Checkpoints trialId={t.id} />
      </Section>
      <Section title="Logs">
        <RunLogs trial={t} />
      </Section>
    </>
  );
}
