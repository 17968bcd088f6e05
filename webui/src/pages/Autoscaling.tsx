// Autoscaling: the instances the autoscaler manages (with spot requests), instance-hours, and
// its decisions with their reasons.

import { useState } from "react";
import { Badge, Pending, Section, Stale } from "../components/common";
import { Table } from "../components/Table";
import { decisionView, instanceView, type ApiDecision, type ApiInstance } from "../determined";
import { age, formatTime, instanceHours } from "../format";
import { usePoll } from "../hooks";
import type { Decision } from "../types";

function DecisionText({ d }: { d: Decision }) {
  const parts: string[] = [];
  if (d.launched.length) parts.push(`launched ${d.launched.join(", ")}: ${d.launch_reason}`);
  else if (d.launch > 0) parts.push(`wanted ${d.launch}: ${d.launch_reason}`);
  for (const t of d.terminated) parts.push(`terminated ${t.id}: ${t.reason}`);
  return (
    <>
      {parts.map((p) => (
        <div key={p}>{p}</div>
      ))}
      {d.error ? <div className="error">{d.error}</div> : null}
    </>
  );
}

export function Autoscaling() {
  const [all, setAll] = useState(false);
  // Every recorded instance: the hours count the terminated ones too; the table shows the live
  // ones unless asked.
  const instances = usePoll<{ instances: ApiInstance[] }>("/api/v1/autoscaler/instances?all=true");
  const decisions = usePoll<{ decisions: ApiDecision[] }>("/api/v1/autoscaler/decisions?limit=50");
  const recorded = (instances.data?.instances ?? []).map(instanceView);
  const live = recorded.filter((i) => i.terminated_at === 0);
  const spot = live.filter((i) => i.state === "spot_requested");
  return (
    <>
      <h1>Autoscaling</h1>
      <Stale error={instances.error} updatedAt={instances.updatedAt} />
      <div className="cards">
        <div className="card">
          <div className="card-title">Instances</div>
          <div className="card-value" data-testid="instance-count">
            {live.length - spot.length}
          </div>
        </div>
        <div className="card">
          <div className="card-title">Spot requests open</div>
          <div className="card-value">{spot.length}</div>
        </div>
        <div className="card">
          <div className="card-title">Instance-hours (all recorded)</div>
          <div className="card-value">{instanceHours(recorded).toFixed(2)}</div>
        </div>
      </div>
      <Section
        title="Instances"
        actions={
          <label>
            <input type="checkbox" checked={all} onChange={(e) => setAll(e.target.checked)} /> with
            terminated ones
          </label>
        }
      >
        {instances.data ? (
          <Table
            testId="instances"
            rows={all ? recorded : live}
            rowKey={(i) => i.id}
            empty="No instances: the autoscaler launches them when work waits (or no pool has a provider)."
            columns={[
              { key: "id", title: "Instance", render: (i) => i.id, sortValue: (i) => i.id },
              { key: "pool", title: "Pool", render: (i) => i.resource_pool },
              { key: "provider", title: "Provider", render: (i) => i.provider },
              {
                key: "type",
                title: "Type",
                render: (i) => `${i.instance_type}${i.spot ? " (spot)" : ""}${i.zone ? ` · ${i.zone}` : ""}`,
              },
              { key: "state", title: "State", render: (i) => <Badge state={i.state} />, sortValue: (i) => i.state },
              { key: "agent", title: "Agent", render: (i) => i.agent || "—" },
              {
                key: "age",
                title: "Age",
                render: (i) => age(i.launched_at, i.terminated_at),
                sortValue: (i) => -i.launched_at,
              },
            ]}
          />
        ) : (
          <Pending {...instances} />
        )}
      </Section>
      <Section title="Decisions">
        {decisions.data ? (
          <Table
            testId="decisions"
            rows={decisions.data.decisions.map(decisionView)}
            rowKey={(d) => `${d.resource_pool}-${d.decided_at}`}
            empty="No decisions yet."
            columns={[
              { key: "at", title: "When", render: (d) => formatTime(d.decided_at) },
              { key: "pool", title: "Pool", render: (d) => d.resource_pool },
              { key: "what", title: "What and why", render: (d) => <DecisionText d={d} /> },
            ]}
          />
        ) : (
          <Pending {...decisions} />
        )}
      </Section>
    </>
  );
}
