// The cluster: its pools (with autoscaling limits), agents and their slots.

import { Badge, Empty, Pending, Section } from "../components/common";
import { Table } from "../components/Table";
import { formatDuration } from "../format";
import { usePoll } from "../hooks";
import type { Agent, MasterInfo, ResourcePool } from "../types";

function SlotSummary({ agents }: { agents: Agent[] }) {
  const byType = new Map<string, { total: number; used: number; disabled: number }>();
  for (const agent of agents) {
    for (const device of agent.devices) {
      const entry = byType.get(device.type) ?? { total: 0, used: 0, disabled: 0 };
      entry.total++;
      if (agent.disabled_slots.includes(device.id) || !agent.enabled) entry.disabled++;
      byType.set(device.type, entry);
    }
    const first = agent.devices[0]?.type;
    if (first) byType.get(first)!.used += agent.used_slots;
  }
  if (byType.size === 0) return <Empty>No slots: no agent is connected.</Empty>;
  return (
    <div className="cards">
      {[...byType].map(([type, s]) => (
        <div className="card" key={type} data-testid={`slots-${type}`}>
          <div className="card-title">{type.toUpperCase()} slots</div>
          <div className="card-value">{s.total}</div>
          <div className="muted">
            {s.used} in use · {s.total - s.used - s.disabled} free · {s.disabled} disabled
          </div>
        </div>
      ))}
    </div>
  );
}

export function Cluster() {
  const info = usePoll<MasterInfo>("/api/v1/master", 30000);
  const agents = usePoll<{ agents: Agent[] }>("/api/v1/agents");
  const pools = usePoll<{ resource_pools: ResourcePool[] }>("/api/v1/resource-pools", 5000);
  return (
    <>
      <h1>Cluster {info.data ? <small className="muted">{info.data.cluster_name}</small> : null}</h1>
      <Section title="Slots">
        {agents.data ? <SlotSummary agents={agents.data.agents} /> : <Pending {...agents} />}
      </Section>
      <Section title="Resource pools">
        {pools.data ? (
          <Table
            testId="pools"
            rows={pools.data.resource_pools}
            rowKey={(p) => p.name}
            empty="No resource pools."
            columns={[
              { key: "name", title: "Pool", render: (p) => p.name, sortValue: (p) => p.name },
              { key: "scheduler", title: "Scheduler", render: (p) => p.scheduler },
              { key: "provider", title: "Provider", render: (p) => p.provider || "static" },
              {
                key: "instances",
                title: "Instances (min / now / max)",
                render: (p) =>
                  p.provider ? `${p.min_instances} / ${p.agents} / ${p.max_instances}` : p.agents,
              },
              { key: "slots", title: "Slots used", render: (p) => `${p.used_slots} / ${p.slots}` },
            ]}
          />
        ) : (
          <Pending {...pools} />
        )}
      </Section>
      <Section title="Agents">
        {agents.data ? (
          <Table
            testId="agents"
            rows={agents.data.agents}
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
                render: (a) =>
                  a.utilization.length
                    ? a.utilization.map((u) => `${Math.round(u.utilization_percent)}%`).join(" ")
                    : "—",
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
