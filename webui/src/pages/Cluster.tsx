// The cluster: its pools (with autoscaling limits), agents and their slots (each agent's mean
// utilisation and a heat strip of its slots; artificial CPU slots said to be what they are).

import { Badge, Empty, Pending, Section, Stale } from "../components/common";
import { HeatStrip } from "../components/HeatStrip";
import { Table } from "../components/Table";
import { formatDuration } from "../format";
import { usePoll } from "../hooks";
import { agentView, poolView, type ApiAgent, type ApiResourcePool } from "../determined";
import type { Agent, MasterInfo } from "../types";
import { artificialSlots, formatPercent, meanUtilization, slotCells } from "../utilization";

interface SlotCounts {
  total: number;
  used: number;
  free: number;
  disabled: number;
  offline: number; // of agents that are not connected (lost, waiting to reconnect)
}

// Slots by type and state. An agent's used slots are counted against its slot type; slots of an
// agent that is not connected are offline; a disabled slot (or agent) that still runs work counts
// as used.
export function countSlots(agents: Agent[]): Map<string, SlotCounts> {
  const byType = new Map<string, SlotCounts>();
  for (const agent of agents) {
    const type = agent.devices[0]?.type ?? "cpu";
    const counts = byType.get(type) ?? { total: 0, used: 0, free: 0, disabled: 0, offline: 0 };
    const total = agent.devices.length;
    counts.total += total;
    if (agent.state !== "connected") {
      counts.offline += total;
    } else {
      const disabled = agent.enabled
        ? agent.devices.filter((d) => agent.disabled_slots.includes(d.id)).length
        : total;
      const used = Math.min(agent.used_slots, total);
      const idleDisabled = Math.max(0, disabled - used);
      counts.used += used;
      counts.disabled += idleDisabled;
      counts.free += Math.max(0, total - used - idleDisabled);
    }
    byType.set(type, counts);
  }
  return byType;
}

function SlotSummary({ agents }: { agents: Agent[] }) {
  const byType = countSlots(agents);
  if (byType.size === 0) return <Empty>No slots: no agent is connected.</Empty>;
  return (
    <div className="cards">
      {[...byType].map(([type, s]) => (
        <div className="card" key={type} data-testid={`slots-${type}`}>
          <div className="card-title">{type.toUpperCase()} slots</div>
          <div className="card-value">{s.total}</div>
          <div className="muted">
            {s.used} in use · {s.free} free · {s.disabled} disabled
            {s.offline ? ` · ${s.offline} offline` : ""}
          </div>
        </div>
      ))}
    </div>
  );
}

// An agent's mean utilisation and a cell per slot; artificial CPU slots all report the host's
// CPU, so they are labelled as such instead of each looking busy.
function AgentUtilization({ agent }: { agent: Agent }) {
  const cells = slotCells(agent);
  const mean = meanUtilization(agent.utilization);
  const artificial = artificialSlots(agent.devices);
  const reported = agent.utilization.length;
  return (
    <div className="util">
      <span
        className="util-mean"
        title={
          mean === null
            ? "no utilisation reported"
            : artificial
              ? "the host's CPU"
              : `mean of ${reported} slot${reported === 1 ? "" : "s"}`
        }
      >
        {formatPercent(mean)}
      </span>
      {cells.length ? <HeatStrip cells={cells} artificial={artificial} /> : null}
      {artificial ? (
        <span className="util-note muted">
          {cells.length} artificial CPU slots: utilisation is the host's CPU
        </span>
      ) : null}
    </div>
  );
}

export function Cluster() {
  const info = usePoll<MasterInfo>("/api/v1/master", 30000);
  const agents = usePoll<{ agents: ApiAgent[] }>("/api/v1/agents");
  const pools = usePoll<{ resourcePools: ApiResourcePool[] }>("/api/v1/resource-pools", 5000);
  const agentRows = agents.data ? agents.data.agents.map(agentView) : null;
  return (
    <>
      <h1>Cluster {info.data ? <small className="muted">{info.data.clusterName}</small> : null}</h1>
      <Stale error={agents.error} updatedAt={agents.updatedAt} />
      <Section title="Slots">
        {agentRows ? <SlotSummary agents={agentRows} /> : <Pending {...agents} />}
      </Section>
      <Section title="Resource pools">
        {pools.data ? (
          <Table
            testId="pools"
            rows={pools.data.resourcePools.map(poolView)}
            rowKey={(p) => p.name}
            empty="No resource pools."
            columns={[
              { key: "name", title: "Pool", render: (p) => p.name, sortValue: (p) => p.name },
              { key: "scheduler", title: "Scheduler", render: (p) => p.scheduler },
              { key: "provider", title: "Provider", render: (p) => p.provider || "static" },
              {
                key: "limits",
                title: "Instances (min–max)",
                render: (p) => (p.provider ? `${p.min_instances}–${p.max_instances}` : "—"),
              },
              { key: "agents", title: "Agents now", render: (p) => p.agents },
              { key: "slots", title: "Slots used", render: (p) => `${p.used_slots} / ${p.slots}` },
            ]}
          />
        ) : (
          <Pending {...pools} />
        )}
      </Section>
      <Section title="Agents">
        {agentRows ? (
          <Table
            testId="agents"
            rows={agentRows}
            rowKey={(a) => a.id}
            empty="No agents are connected. With an autoscaled pool, agents start when work waits."
            columns={[
              { key: "id", title: "Agent", render: (a) => a.id, sortValue: (a) => a.id },
              { key: "state", title: "State", render: (a) => <Badge state={a.state} /> },
              { key: "pool", title: "Pool", render: (a) => a.resource_pool },
              {
                key: "slots",
                title: "Slots used",
                render: (a) => `${a.used_slots} / ${a.slots}`,
                sortValue: (a) => a.used_slots,
              },
              {
                key: "util",
                title: "Utilisation",
                render: (a) => <AgentUtilization agent={a} />,
                sortValue: (a) => meanUtilization(a.utilization) ?? -1,
              },
              {
                key: "enabled",
                title: "Enabled",
                render: (a) => (a.enabled ? (a.draining ? "draining" : "yes") : "no"),
              },
              {
                key: "heard",
                title: "Last heard",
                render: (a) => `${formatDuration(a.last_heard_ms_ago)} ago`,
              },
            ]}
          />
        ) : (
          <Pending {...agents} />
        )}
      </Section>
    </>
  );
}
