// The master's REST answers in Determined's shapes (camelCase, its enums, RFC 3339 times) and
// their conversion to the views the pages read (types.ts): the one place that knows both.

import type {
  Agent,
  Checkpoint,
  CheckpointPolicy,
  Decision,
  Experiment,
  ExperimentDetail,
  Instance,
  Job,
  ResourcePool,
  Trial,
} from "./types";

export interface ApiDevice {
  id?: number;
  brand?: string;
  uuid?: string;
  type?: string; // TYPE_CPU | TYPE_CUDA | TYPE_ROCM
}

export interface ApiSlot {
  id: string;
  device?: ApiDevice;
  enabled: boolean;
  draining: boolean;
  memoryMib?: number;
  container?: { id: string; state: string };
}

export interface ApiAgent {
  id: string;
  registeredTime: string;
  slots: Record<string, ApiSlot>;
  resourcePools: string[];
  enabled: boolean;
  draining: boolean;
  version: string;
  state: string; // connected | lost | ...
  hostname: string;
  usedSlots: number;
  utilization: { slotId: string; utilizationPercent: number; memoryUsedMib: number }[];
  lastHeardMsAgo: number;
}

export interface ApiResourcePool {
  name: string;
  description: string;
  schedulerType: string; // SCHEDULER_TYPE_PRIORITY | ...
  provider: string;
  minAgents: number;
  maxAgents: number;
  slotsPerAgent: number;
  numAgents: number;
  slotsAvailable: number;
  slotsUsed: number;
}

export interface ApiJob {
  jobId: string;
  type: string; // TYPE_COMMAND | TYPE_EXPERIMENT | ...
  submissionTime: string;
  resourcePool: string;
  isPreemptible: boolean;
  priority: number;
  weight: number;
  requestedSlots: number;
  allocatedSlots: number;
  name: string;
  summary: { state: string; jobsAhead: number };
}

// "TYPE_CUDA" -> "cuda", "STATE_QUEUED" -> "QUEUED": an enum's value without its prefix.
export function enumValue(value: string | undefined, prefix: string): string {
  if (!value) return "";
  return value.startsWith(prefix) ? value.slice(prefix.length) : value;
}

// RFC 3339 -> Unix nanoseconds (what format.ts takes); 0 for none.
export function timeNs(text: string | undefined): number {
  const ms = text ? Date.parse(text) : NaN;
  return Number.isFinite(ms) ? ms * 1e6 : 0;
}

export function agentView(a: ApiAgent): Agent {
  const slots = Object.values(a.slots ?? {});
  return {
    id: a.id,
    state: a.state,
    resource_pool: a.resourcePools?.[0] ?? "",
    hostname: a.hostname,
    slots: slots.length,
    devices: slots.map((s) => ({
      id: s.id,
      type: enumValue(s.device?.type, "TYPE_").toLowerCase(),
      brand: s.device?.brand ?? "",
      uuid: s.device?.uuid ?? "",
      memory_mib: s.memoryMib ?? 0,
    })),
    enabled: a.enabled,
    draining: a.draining,
    disabled_slots: slots.filter((s) => !s.enabled).map((s) => s.id),
    used_slots: a.usedSlots,
    utilization: (a.utilization ?? []).map((u) => ({
      slot_id: u.slotId,
      utilization_percent: u.utilizationPercent,
      memory_used_mib: u.memoryUsedMib,
    })),
    last_heard_ms_ago: a.lastHeardMsAgo,
  };
}

export function poolView(p: ApiResourcePool): ResourcePool {
  return {
    name: p.name,
    description: p.description,
    scheduler: enumValue(p.schedulerType, "SCHEDULER_TYPE_").toLowerCase(),
    provider: p.provider,
    min_instances: p.minAgents,
    max_instances: p.maxAgents,
    slots_per_instance: p.slotsPerAgent ?? 0,
    agents: p.numAgents,
    slots: p.slotsAvailable,
    used_slots: p.slotsUsed,
  };
}

export function jobView(j: ApiJob): Job {
  return {
    job_id: j.jobId,
    type: enumValue(j.type, "TYPE_"),
    state: enumValue(j.summary?.state, "STATE_"),
    resource_pool: j.resourcePool,
    jobs_ahead: j.summary?.jobsAhead ?? 0,
    requested_slots: j.requestedSlots,
    allocated_slots: j.allocatedSlots,
    priority: j.priority,
    weight: j.weight,
    preemptible: j.isPreemptible,
    submitted_at: timeNs(j.submissionTime),
    name: j.name,
  };
}

export interface ApiMetricsWorkload {
  metrics: { avgMetrics: Record<string, number> };
  totalBatches: number;
}

export interface ApiExperiment {
  id: number;
  name: string;
  description?: string;
  labels?: string[];
  state: string; // STATE_ACTIVE | ...
  searcherType: string;
  searcherMetric?: string;
  resourcePool?: string;
  numTrials: number;
  trialsActive?: number;
  trialsCompleted?: number;
  trialsErrored?: number;
  message?: string;
  startTime: string;
  endTime?: string;
  username: string;
  smallerIsBetter?: boolean;
  progress?: number;
  originalConfig: string;
  checkpointCount?: number;
  checkpointSize?: string; // int64 as decimal text
  config?: { checkpoint_storage?: Record<string, unknown> }; // the config as JSON
}

// What the experiment's checkpoint_storage keeps (Determined's defaults where it says nothing).
function checkpointPolicyOf(e: ApiExperiment): CheckpointPolicy {
  const storage = e.config?.checkpoint_storage ?? {};
  const count = (field: string, fallback: number) => {
    const value = storage[field];
    return typeof value === "number" ? value : fallback;
  };
  return {
    experiment_best: count("save_experiment_best", 0),
    trial_best: count("save_trial_best", 1),
    trial_latest: count("save_trial_latest", 1),
  };
}

export interface ApiTrial {
  id: number;
  experimentId: number;
  requestId?: number;
  state: string;
  taskState?: string;
  hparams: Record<string, unknown> | null;
  restarts: number;
  runId?: number;
  taskId?: string;
  totalBatchesProcessed: number;
  bestValidation?: ApiMetricsWorkload;
  latestCheckpoint?: string;
  startTime: string;
  endTime?: string;
}

export interface ApiCheckpoint {
  uuid: string;
  state: string; // STATE_COMPLETED | ...
  training: { trialId?: number };
  stepsCompleted?: number;
  sizeBytes?: number;
}

// Determined's v1Model and v1ModelVersion (the fields this UI shows).
export interface ApiModel {
  id: number;
  name: string;
  description?: string;
  labels?: string[];
  archived?: boolean;
  username?: string;
  creationTime: string;
  lastUpdatedTime?: string;
  numVersions: number;
}

export interface ApiModelVersion {
  version: number;
  name?: string;
  comment?: string;
  labels?: string[];
  notes?: string;
  username?: string;
  creationTime: string;
  checkpoint: (ApiCheckpoint & { training: { trialId?: number; experimentId?: number } }) | null;
}

// A model's page address: by name, as Determined's REST paths take it.
export function modelHref(name: string): string {
  return `#/models/${encodeURIComponent(name)}`;
}

export interface ApiExperimentDetail {
  experiment: ApiExperiment;
  trials: ApiTrial[];
}

export function experimentView(e: ApiExperiment): Experiment {
  return {
    id: e.id,
    name: e.name,
    description: e.description ?? "",
    labels: e.labels ?? [],
    state: enumValue(e.state, "STATE_"),
    searcher: e.searcherType,
    resource_pool: e.resourcePool ?? "",
    trials: e.numTrials,
    trials_active: e.trialsActive ?? 0,
    trials_completed: e.trialsCompleted ?? 0,
    trials_errored: e.trialsErrored ?? 0,
    message: e.message ?? "",
    start_at: timeNs(e.startTime),
    end_at: timeNs(e.endTime),
    owner: e.username,
    metric: e.searcherMetric ?? "",
    smaller_is_better: e.smallerIsBetter ?? true,
    progress: e.progress ?? 0,
    checkpoint_count: e.checkpointCount ?? 0,
    checkpoint_bytes: Number(e.checkpointSize ?? 0),
    checkpoint_policy: checkpointPolicyOf(e),
  };
}

export function trialView(t: ApiTrial): Trial {
  return {
    id: t.id,
    experiment_id: t.experimentId,
    request_id: t.requestId ?? 0,
    state: enumValue(t.state, "STATE_"),
    task_state: t.taskState ?? "",
    hparams: t.hparams,
    restarts: t.restarts,
    run_id: t.runId ?? 0,
    task_id: t.taskId ?? "",
    steps_completed: t.totalBatchesProcessed,
    best_validation: t.bestValidation?.metrics?.avgMetrics ?? null,
    latest_checkpoint: t.latestCheckpoint ?? "",
    start_at: timeNs(t.startTime),
    end_at: timeNs(t.endTime),
  };
}

export function checkpointView(c: ApiCheckpoint): Checkpoint {
  return {
    uuid: c.uuid,
    trial_id: c.training?.trialId ?? 0,
    steps_completed: c.stepsCompleted ?? 0,
    state: enumValue(c.state, "STATE_"),
    size_bytes: c.sizeBytes ?? 0,
  };
}

export function experimentDetailView(d: ApiExperimentDetail): ExperimentDetail {
  return {
    experiment: experimentView(d.experiment),
    trials: (d.trials ?? []).map(trialView),
    config: d.experiment.originalConfig,
  };
}

// This master's own autoscaler records, in the API's conventions.
export interface ApiInstance {
  id: string;
  resourcePool: string;
  provider: string;
  instanceType: string;
  zone: string;
  spot: boolean;
  state: string;
  agent: string;
  launchedAt?: string;
  terminatedAt?: string; // once it ended
}

export interface ApiDecision {
  resourcePool: string;
  decidedAt?: string;
  launch: number;
  launched: string[];
  launchReason: string;
  terminated: { id: string; reason: string }[];
  error: string;
}

export function instanceView(i: ApiInstance): Instance {
  return {
    id: i.id,
    resource_pool: i.resourcePool,
    provider: i.provider,
    instance_type: i.instanceType,
    zone: i.zone,
    spot: i.spot,
    state: i.state,
    agent: i.agent,
    launched_at: timeNs(i.launchedAt),
    terminated_at: timeNs(i.terminatedAt),
  };
}

export function decisionView(d: ApiDecision): Decision {
  return {
    resource_pool: d.resourcePool,
    decided_at: timeNs(d.decidedAt),
    launch: d.launch,
    launched: d.launched ?? [],
    launch_reason: d.launchReason,
    terminated: d.terminated ?? [],
    error: d.error,
  };
}
