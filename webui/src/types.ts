// The views the pages read: the REST answers as they were before the master spoke Determined's
// shapes; determined.ts converts those answers to these (see the master's /api/v1/openapi.json).

export interface Agent {
  id: string;
  state: string; // connected | lost | ...
  resource_pool: string;
  hostname: string;
  slots: number;
  devices: { id: string; type: string; brand: string; uuid: string; memory_mib: number }[];
  enabled: boolean;
  draining: boolean;
  disabled_slots: string[];
  used_slots: number;
  utilization: { slot_id: string; utilization_percent: number; memory_used_mib: number }[];
  last_heard_ms_ago: number;
}

export interface ResourcePool {
  name: string;
  description: string;
  scheduler: string;
  provider: string;
  min_instances: number;
  max_instances: number;
  slots_per_instance: number;
  agents: number;
  slots: number;
  used_slots: number;
}

export interface Experiment {
  id: number;
  name: string;
  description: string;
  labels: string[];
  state: string;
  searcher: string;
  resource_pool: string;
  trials: number;
  trials_active: number;
  trials_completed: number;
  trials_errored: number;
  message: string;
  start_at: number;
  end_at: number;
  owner: string;
  metric: string; // the searcher's
  smaller_is_better: boolean;
  progress: number; // 0..1
  checkpoint_count: number; // its checkpoints that still have files (what save_* kept)
  checkpoint_bytes: number;
  checkpoint_policy: CheckpointPolicy;
}

// What an experiment's checkpoint_storage keeps once its trials end (save_*).
export interface CheckpointPolicy {
  experiment_best: number;
  trial_best: number;
  trial_latest: number;
}

export interface Trial {
  id: number;
  experiment_id: number;
  request_id: number;
  state: string;
  task_state: string;
  hparams: Record<string, unknown> | null;
  restarts: number;
  run_id: number;
  task_id: string;
  steps_completed: number;
  best_validation: Record<string, number> | null;
  latest_checkpoint: string;
  start_at: number;
  end_at: number;
}

export interface ExperimentDetail {
  experiment: Experiment;
  trials: Trial[];
  config: string;
}

export interface MetricPoint {
  step: number;
  run_id: number;
  metrics: Record<string, unknown>;
}

export interface Checkpoint {
  uuid: string;
  trial_id: number;
  steps_completed: number;
  state: string;
  size_bytes: number;
}

export interface Job {
  job_id: string;
  type: string;
  state: string;
  resource_pool: string;
  jobs_ahead: number;
  requested_slots: number;
  allocated_slots: number;
  priority: number;
  weight: number;
  preemptible: boolean;
  submitted_at: number;
  name: string;
}

export interface Instance {
  id: string;
  resource_pool: string;
  provider: string;
  instance_type: string;
  zone: string;
  spot: boolean;
  state: string; // spot_requested | starting | running | stopping | stopped | terminated
  agent: string; // connected | idle | lost | ""
  launched_at: number;
  terminated_at: number;
}

export interface Decision {
  resource_pool: string;
  decided_at: number;
  launch: number;
  launched: string[];
  launch_reason: string;
  terminated: { id: string; reason: string }[];
  error: string;
}

export interface MasterInfo {
  version: string; // the Determined release whose API the master serves
  buildVersion: string;
  clusterName: string;
  clusterId: string;
}
