// One trial: its state, hyperparameters, learning curves, checkpoints and live logs.

import { Badge, Pending, Section } from "../components/common";
import { Logs } from "../components/Logs";
import { Table } from "../components/Table";
import { age, formatBytes, formatNumber } from "../format";
import { usePoll } from "../hooks";
import type { Checkpoint, Trial } from "../types";
import { LearningCurves } from "./ExperimentDetail";

export function TrialDetail({ id }: { id: number }) {
  const trial = usePoll<{ trial: Trial }>(`/api/v1/trials/${id}`);
  const experimentId = trial.data?.trial.experiment_id;
  const checkpoints = usePoll<{ checkpoints: Checkpoint[] }>(
    experimentId ? `/api/v1/experiments/${experimentId}/checkpoints` : null,
    5000,
  );
  if (!trial.data) return <Pending {...trial} />;
  const t = trial.data.trial;
  const mine = (checkpoints.data?.checkpoints ?? []).filter((c) => c.trial_id === t.id);
  return (
    <>
      <h1>
        Trial {t.id}{" "}
        <small className="muted">
          of <a href={`#/experiments/${t.experiment_id}`}>experiment {t.experiment_id}</a>
        </small>
      </h1>
      <div className="summary">
        <Badge state={t.state} />
        <span>task {t.task_state || "—"}</span>
        <span>run {t.run_id}</span>
        <span>restarts {t.restarts}</span>
        <span>batches {t.steps_completed}</span>
        <span>duration {age(t.start_at, t.end_at)}</span>
      </div>
      <Section title="Hyperparameters">
        <table className="kv">
          <tbody>
            {Object.entries(t.hparams ?? {}).map(([name, value]) => (
              <tr key={name}>
                <th>{name}</th>
                <td>{typeof value === "number" ? formatNumber(value) : JSON.stringify(value)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </Section>
      <Section title="Learning curves">
        <LearningCurves trialId={t.id} />
      </Section>
      <Section title="Checkpoints">
        {checkpoints.data ? (
          <Table
            testId="checkpoints"
            rows={mine}
            rowKey={(c) => c.uuid}
            empty="No checkpoints yet."
            columns={[
              { key: "uuid", title: "UUID", render: (c) => <code>{c.uuid}</code> },
              { key: "steps", title: "Batches", render: (c) => c.steps_completed, sortValue: (c) => c.steps_completed },
              { key: "state", title: "State", render: (c) => <Badge state={c.state} /> },
              { key: "size", title: "Size", render: (c) => formatBytes(c.size_bytes), sortValue: (c) => c.size_bytes },
            ]}
          />
        ) : (
          <Pending {...checkpoints} />
        )}
      </Section>
      <Section title={`Logs (run ${t.run_id})`}>
        {t.task_id ? <Logs taskId={t.task_id} /> : <p className="muted">Not started yet.</p>}
      </Section>
    </>
  );
}
