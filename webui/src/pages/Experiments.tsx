// Experiments: filtered by state and name, sortable, with progress.

import { useState } from "react";
import { Badge, Pending, Progress, Stale } from "../components/common";
import { Table } from "../components/Table";
import { age, formatBytes, formatTime } from "../format";
import { useDebounced, usePoll } from "../hooks";
import { experimentView, type ApiExperiment } from "../determined";

const STATES = ["", "ACTIVE", "PAUSED", "COMPLETED", "CANCELED", "ERROR"];

export function Experiments() {
  const [state, setState] = useState("");
  const [name, setName] = useState("");
  const typed = useDebounced(name);
  const query = new URLSearchParams({ limit: "200" });
  if (state) query.set("states", `STATE_${state}`);
  if (typed) query.set("name", typed);
  const list = usePoll<{ experiments: ApiExperiment[]; pagination: { total: number } }>(
    `/api/v1/experiments?${query}`,
  );
  return (
    <>
      <h1>Experiments</h1>
      <div className="filters">
        <label>
          State{" "}
          <select value={state} onChange={(e) => setState(e.target.value)} name="state">
            {STATES.map((s) => (
              <option key={s} value={s}>
                {s || "any"}
              </option>
            ))}
          </select>
        </label>
        <label>
          Name{" "}
          <input
            value={name}
            onChange={(e) => setName(e.target.value)}
            placeholder="contains…"
            name="name"
          />
        </label>
        {list.data ? (
          <span className="muted">
            {list.data.pagination.total > list.data.experiments.length
              ? `the newest ${list.data.experiments.length} of ${list.data.pagination.total}`
              : `${list.data.pagination.total} in all`}
          </span>
        ) : null}
      </div>
      <Stale error={list.error} updatedAt={list.updatedAt} />
      {list.data ? (
        <Table
          testId="experiments"
          rows={list.data.experiments.map(experimentView)}
          rowKey={(e) => e.id}
          empty={
            state || name ? (
              "No experiment matches."
            ) : (
              <>
                No experiments yet: submit one with <code>det experiment create CONFIG MODEL_DIR</code>.
              </>
            )
          }
          columns={[
            {
              key: "id",
              title: "ID",
              render: (e) => <a href={`#/experiments/${e.id}`}>{e.id}</a>,
              sortValue: (e) => e.id,
            },
            {
              key: "name",
              title: "Name",
              render: (e) => <a href={`#/experiments/${e.id}`}>{e.name || "(unnamed)"}</a>,
              sortValue: (e) => e.name,
            },
            { key: "state", title: "State", render: (e) => <Badge state={e.state} />, sortValue: (e) => e.state },
            { key: "owner", title: "Owner", render: (e) => e.owner || "—", sortValue: (e) => e.owner },
            { key: "searcher", title: "Searcher", render: (e) => e.searcher },
            {
              key: "progress",
              title: "Progress",
              render: (e) => (
                <>
                  <Progress value={e.progress} />{" "}
                  <span className="muted">
                    {Math.round(e.progress * 100)}% · {e.trials_completed}/{e.trials} trials
                    {e.trials_errored ? `, ${e.trials_errored} errored` : ""}
                  </span>
                </>
              ),
              sortValue: (e) => e.progress,
            },
            {
              key: "checkpoints",
              title: "Checkpoints",
              render: (e) => `${e.checkpoint_count} · ${formatBytes(e.checkpoint_bytes)}`,
              sortValue: (e) => e.checkpoint_bytes,
            },
            { key: "started", title: "Started", render: (e) => formatTime(e.start_at), sortValue: (e) => e.start_at },
            { key: "duration", title: "Duration", render: (e) => age(e.start_at, e.end_at) },
          ]}
        />
      ) : (
        <Pending {...list} />
      )}
    </>
  );
}
