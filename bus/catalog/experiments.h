#pragma once

// Gateway methods for experiments and trials, and the experiment service's methods the Core API
// (trial code's REST calls) reaches over inproc.

#include <cstdint>
#include <string>
#include <vector>

#include "bus/codec.h"

namespace det::bus {

// Method "experiment.create": the experiment YAML as written and its model definition folder as a
// gzipped tar (at most kMaxModelDefinitionBytes).
struct ExperimentCreateRequest {
  static constexpr std::string_view kType = "experiment.create";
  static constexpr int64_t kMaxModelDefinitionBytes = 96 << 20;  // Determined's limit, ~95 MiB
  std::string config_yaml;
  Bytes model_definition;
  // Who creates it: set by the master's api from the caller's token (what a client sends is
  // replaced).
  int64_t owner_id = 0;
  std::string owner;
  bool dry_run = false;  // only check the config (with the cluster's defaults): create nothing
  bool operator==(const ExperimentCreateRequest&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("config_yaml", s.config_yaml, kRequired);
    v("model_definition", s.model_definition);
    v("owner_id", s.owner_id);
    v("owner", s.owner);
    v("dry_run", s.dry_run);
  }
};
struct ExperimentCreateReply {
  static constexpr std::string_view kType = "experiment.create.reply";
  int64_t id = 0;  // 0 for a dry run
  // Fields accepted but not acted on, each naming its field ("workspace: not implemented ...").
  std::vector<std::string> warnings;
  bool operator==(const ExperimentCreateReply&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("id", s.id, kRequired);
    v("warnings", s.warnings);
  }
};

struct TrialSummary {
  int64_t id = 0;
  int64_t experiment_id = 0;
  int64_t request_id = 0;            // the searcher's number for it
  std::string state;                 // ACTIVE, PAUSED, STOPPING_*, COMPLETED, CANCELED, ERROR
  std::string task_state;            // its current run's task: QUEUED ... TERMINATED; empty if none
  std::string hparams_json;          // the hyperparameters, as JSON
  int32_t restarts = 0;              // failures counted against max_restarts
  int32_t run_id = 0;                // runs started (restarts, pauses and preemptions each add one)
  std::string task_id;               // the current (or last) run's task
  int64_t steps_completed = 0;       // the latest validation's time_metric
  std::string best_validation_json;  // the best validation's metrics; empty if none yet
  std::string latest_validation_json;  // the latest one's (at steps_completed); empty if none
  std::string runner_state;            // what the run last said it was doing
  std::string latest_checkpoint;       // uuid; empty if none
  int64_t start_at = 0;
  int64_t end_at = 0;
  bool operator==(const TrialSummary&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("id", s.id, kRequired);
    v("experiment_id", s.experiment_id);
    v("request_id", s.request_id);
    v("state", s.state);
    v("task_state", s.task_state);
    v("hparams_json", s.hparams_json);
    v("restarts", s.restarts);
    v("run_id", s.run_id);
    v("task_id", s.task_id);
    v("steps_completed", s.steps_completed);
    v("best_validation_json", s.best_validation_json);
    v("latest_validation_json", s.latest_validation_json);
    v("runner_state", s.runner_state);
    v("latest_checkpoint", s.latest_checkpoint);
    v("start_at", s.start_at);
    v("end_at", s.end_at);
  }
};

struct ExperimentSummary {
  int64_t id = 0;
  std::string name;
  std::string description;
  std::vector<std::string> labels;
  std::string state;  // ACTIVE, PAUSED, STOPPING_*, COMPLETED, CANCELED, ERROR, DELETING
  std::string searcher;
  std::string resource_pool;
  int32_t trials = 0;
  int32_t trials_active = 0;
  int32_t trials_completed = 0;
  int32_t trials_errored = 0;
  std::string message;  // why it errored, if it did
  int64_t start_at = 0;
  int64_t end_at = 0;
  int64_t owner_id = 0;  // 0: none (created before owners were recorded)
  std::string owner;     // the owner's username
  std::string metric;    // the searcher's metric, and which way is better
  bool smaller_is_better = true;
  // 0..1: finished trials count whole, running ones by their training length so far, trials the
  // searcher has yet to create as nothing; 1 once the experiment ended.
  double progress = 0;
  std::string config_json;  // its config as JSON (the YAML it was created with, read)
  // Its checkpoints that still have files (what checkpoint_storage.save_* kept, and those the
  // model registry holds) and their bytes: filled by the front door from PostgreSQL.
  int32_t checkpoint_count = 0;
  int64_t checkpoint_bytes = 0;
  bool operator==(const ExperimentSummary&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("id", s.id, kRequired);
    v("name", s.name);
    v("description", s.description);
    v("labels", s.labels);
    v("state", s.state);
    v("searcher", s.searcher);
    v("resource_pool", s.resource_pool);
    v("trials", s.trials);
    v("trials_active", s.trials_active);
    v("trials_completed", s.trials_completed);
    v("trials_errored", s.trials_errored);
    v("message", s.message);
    v("start_at", s.start_at);
    v("owner_id", s.owner_id);
    v("owner", s.owner);
    v("metric", s.metric);
    v("smaller_is_better", s.smaller_is_better);
    v("progress", s.progress);
    v("config_json", s.config_json);
    v("end_at", s.end_at);
    v("checkpoint_count", s.checkpoint_count);
    v("checkpoint_bytes", s.checkpoint_bytes);
  }
};

// Method "experiment.list": experiments, newest first.
// Newest first; filters combine (all must hold); then `offset` and `limit` page the matches.
struct ExperimentListRequest {
  static constexpr std::string_view kType = "experiment.list";
  std::vector<std::string> states;  // any of these (empty: every state)
  std::string name;                 // the name contains this
  std::string label;                // has this label
  std::vector<std::string> owners;  // owned by one of these usernames (empty: anyone's)
  int32_t offset = 0;               // >= 0
  int32_t limit = 0;                // 0: every match; else 1..10000
  bool operator==(const ExperimentListRequest&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("states", s.states);
    v("name", s.name);
    v("label", s.label);
    v("owners", s.owners);
    v("offset", s.offset);
    v("limit", s.limit);
  }
};
struct ExperimentList {
  static constexpr std::string_view kType = "experiment.list.reply";
  std::vector<ExperimentSummary> experiments;
  int32_t total = 0;  // matches before paging
  bool operator==(const ExperimentList&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("experiments", s.experiments);
    v("total", s.total);
  }
};

// Whether `experiment` passes the request's filters.
inline bool MatchesFilters(const ExperimentSummary& experiment,
                           const ExperimentListRequest& request) {
  const auto has = [](const std::vector<std::string>& list, const std::string& item) {
    for (const std::string& x : list) {
      if (x == item) return true;
    }
    return false;
  };
  return (request.states.empty() || has(request.states, experiment.state)) &&
         experiment.name.find(request.name) != std::string::npos &&
         (request.label.empty() || has(experiment.labels, request.label)) &&
         (request.owners.empty() || has(request.owners, experiment.owner));
}

// Method "experiment.get": one experiment with its trials (by id) and its config.
struct ExperimentGetRequest {
  static constexpr std::string_view kType = "experiment.get";
  int64_t id = 0;
  bool operator==(const ExperimentGetRequest&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("id", s.id, kRequired);
  }
};
struct ExperimentGetReply {
  static constexpr std::string_view kType = "experiment.get.reply";
  ExperimentSummary experiment;
  std::vector<TrialSummary> trials;
  std::string config_yaml;
  bool operator==(const ExperimentGetReply&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("experiment", s.experiment, kRequired);
    v("trials", s.trials);
    v("config_yaml", s.config_yaml);
  }
};

// Method "experiment.action": pause | activate | cancel | kill | delete. The reply carries the
// experiment's state after it; FailedPrecondition when the state does not allow the action.
struct ExperimentActionRequest {
  static constexpr std::string_view kType = "experiment.action";
  int64_t id = 0;
  std::string action;
  bool operator==(const ExperimentActionRequest&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("id", s.id, kRequired);
    v("action", s.action, kRequired);
  }
};
struct ExperimentActionReply {
  static constexpr std::string_view kType = "experiment.action.reply";
  std::string state;
  bool operator==(const ExperimentActionReply&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("state", s.state);
  }
};

// Method "experiment.continue" (Determined's ContinueExperiment): a finished single-searcher
// experiment trains its one trial again, under its stored config with `override_config_yaml` (a
// YAML mapping, "" for none) and then `settings` ("searcher.max_time=200", as det's --config:
// the value read as YAML) merged over it. The trial keeps its id and metrics and resumes from its
// latest checkpoint. FailedPrecondition when the experiment is not finished or has another
// searcher; InvalidArgument naming what the merged config lacks.
struct ExperimentContinueRequest {
  static constexpr std::string_view kType = "experiment.continue";
  int64_t id = 0;
  std::string override_config_yaml;
  std::vector<std::string> settings;
  bool operator==(const ExperimentContinueRequest&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("id", s.id, kRequired);
    v("override_config_yaml", s.override_config_yaml);
    v("settings", s.settings);
  }
};
struct ExperimentContinueReply {
  static constexpr std::string_view kType = "experiment.continue.reply";
  std::string state;                  // the experiment's after it (ACTIVE)
  std::vector<std::string> warnings;  // as ExperimentCreateReply's, for the merged config
  bool operator==(const ExperimentContinueReply&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("state", s.state);
    v("warnings", s.warnings);
  }
};

// Method "trial.get".
struct TrialGetRequest {
  static constexpr std::string_view kType = "trial.get";
  int64_t id = 0;
  bool operator==(const TrialGetRequest&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("id", s.id, kRequired);
  }
};
// Method "trial.metrics" (answered by the front door from PostgreSQL): a trial's training or
// validation metrics by step, after `after_step`: a page of `limit` points, or, with `max_points`,
// the whole curve after `after_step` in at most about that many values per metric (downsampled,
// keeping each step range's extremes, when longer).
struct TrialMetricsRequest {
  static constexpr std::string_view kType = "trial.metrics";
  int64_t trial_id = 0;
  std::string kind = "training";  // training | validation
  int64_t after_step = -1;
  int32_t limit = 1000;    // 1..10000
  int32_t max_points = 0;  // 0: a page of `limit`; else 2..20000
  bool operator==(const TrialMetricsRequest&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("trial_id", s.trial_id, kRequired);
    v("kind", s.kind);
    v("after_step", s.after_step);
    v("limit", s.limit);
    v("max_points", s.max_points);
  }
};

struct TrialMetric {
  int64_t step = 0;
  int32_t run_id = 0;
  std::string metrics_json;  // the reported object
  int64_t reported_at = 0;   // Unix nanoseconds (0: not read)
  bool operator==(const TrialMetric&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("step", s.step, kRequired);
    v("run_id", s.run_id);
    v("reported_at", s.reported_at);
    v("metrics_json", s.metrics_json);
  }
};

struct TrialMetricsReply {
  static constexpr std::string_view kType = "trial.metrics.reply";
  std::vector<TrialMetric> metrics;
  bool downsampled = false;  // max_points cut the curve down to its extremes
  bool operator==(const TrialMetricsReply&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("metrics", s.metrics);
    v("downsampled", s.downsampled);
  }
};

// Method "trial.kill": stops one trial's run; the trial ends CANCELED and the search goes on with
// the others.
struct TrialKillRequest {
  static constexpr std::string_view kType = "trial.kill";
  int64_t id = 0;
  bool operator==(const TrialKillRequest&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("id", s.id, kRequired);
  }
};

struct TrialGetReply {
  static constexpr std::string_view kType = "trial.get.reply";
  TrialSummary trial;
  bool operator==(const TrialGetReply&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("trial", s.trial, kRequired);
  }
};

// Core API -> experiment service (inproc): what one allocation of a trial reported, after the
// Core API has stored it. `kind`: validation (metrics_json carries the searcher's metric and
// time_metric), checkpoint (checkpoint uuid, steps), exit (reason: ERRORED | INVALID_HP |
// USER_CANCELED), ready, progress, runner_state (reason: what the run says it is doing). The
// reply says whether the trial should stop now.
struct TrialReport {
  static constexpr std::string_view kType = "trial.report";
  std::string allocation_id;
  std::string kind;
  int64_t steps = 0;
  std::string metrics_json;
  std::string checkpoint_uuid;
  std::string reason;
  double progress = 0;
  bool operator==(const TrialReport&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("allocation_id", s.allocation_id, kRequired);
    v("kind", s.kind, kRequired);
    v("steps", s.steps);
    v("metrics_json", s.metrics_json);
    v("checkpoint_uuid", s.checkpoint_uuid);
    v("reason", s.reason);
    v("progress", s.progress);
  }
};
// Method "trial.signal": whether the allocation should stop (preempted, paused, stopped by the
// searcher, killed); also the reply to trial.report. NotFound for an allocation that is not a
// trial's current run.
struct TrialSignalRequest {
  static constexpr std::string_view kType = "trial.signal";
  std::string allocation_id;
  bool operator==(const TrialSignalRequest&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("allocation_id", s.allocation_id, kRequired);
  }
};
struct TrialSignal {
  static constexpr std::string_view kType = "trial.signal.reply";
  int64_t trial_id = 0;
  bool should_stop = false;
  std::string reason;  // why it should stop
  bool operator==(const TrialSignal&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("trial_id", s.trial_id);
    v("should_stop", s.should_stop);
    v("reason", s.reason);
  }
};

// Method "trial.signals": the stop signals of many runs at once (the HTTP wing's parked
// preemption long polls ask for all theirs in one call).
struct TrialSignalsRequest {
  static constexpr std::string_view kType = "trial.signals";
  std::vector<std::string> allocation_ids;
  bool operator==(const TrialSignalsRequest&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("allocation_ids", s.allocation_ids);
  }
};
struct AllocationSignal {
  std::string allocation_id;
  bool live = false;  // false: not a live trial run (any more)
  TrialSignal signal;
  bool operator==(const AllocationSignal&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("allocation_id", s.allocation_id, kRequired);
    v("live", s.live);
    v("signal", s.signal);
  }
};
struct TrialSignals {
  static constexpr std::string_view kType = "trial.signals.reply";
  std::vector<AllocationSignal> signals;  // in the order asked
  bool operator==(const TrialSignals&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("signals", s.signals);
  }
};

// Method "checkpoint.delete" (Determined's DeleteCheckpoints): removes the checkpoints' files as
// garbage collection does, then marks them DELETED. Each must be a COMPLETED or PARTIALLY_DELETED
// checkpoint of an experiment the requester owns (or the requester an admin) that no model version
// registers; otherwise none is removed and the error names the first that may not go (NotFound,
// PermissionDenied, FailedPrecondition). `requester_*` are set by the gateway, never by a client.
struct CheckpointDeleteRequest {
  static constexpr std::string_view kType = "checkpoint.delete";
  std::vector<std::string> uuids;
  int64_t requester_id = 0;
  bool requester_admin = false;
  bool operator==(const CheckpointDeleteRequest&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("uuids", s.uuids, kRequired);
    v("requester_id", s.requester_id);
    v("requester_admin", s.requester_admin);
  }
};
struct CheckpointDeleteReply {
  static constexpr std::string_view kType = "checkpoint.delete.reply";
  int32_t removing = 0;  // whose removal started (already DELETED ones are not counted)
  bool operator==(const CheckpointDeleteReply&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("removing", s.removing);
  }
};

// Method "experiment.checkpoints": an experiment's checkpoints, by trial then steps.
struct ExperimentCheckpointsRequest {
  static constexpr std::string_view kType = "experiment.checkpoints";
  int64_t id = 0;
  bool operator==(const ExperimentCheckpointsRequest&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("id", s.id, kRequired);
  }
};

struct CheckpointSummary {
  std::string uuid;
  int64_t trial_id = 0;
  int64_t steps_completed = 0;
  std::string state;  // ACTIVE, COMPLETED, DELETED, ...
  int64_t size_bytes = 0;
  int64_t reported_at = 0;  // Unix nanoseconds
  int64_t experiment_id = 0;
  std::string resources_json;  // file name -> size
  std::string metadata_json;
  bool operator==(const CheckpointSummary&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("uuid", s.uuid, kRequired);
    v("trial_id", s.trial_id);
    v("steps_completed", s.steps_completed);
    v("state", s.state);
    v("size_bytes", s.size_bytes);
    v("experiment_id", s.experiment_id);
    v("resources_json", s.resources_json);
    v("metadata_json", s.metadata_json);
    v("reported_at", s.reported_at);
  }
};

struct CheckpointList {
  static constexpr std::string_view kType = "experiment.checkpoints.reply";
  std::vector<CheckpointSummary> checkpoints;
  bool operator==(const CheckpointList&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("checkpoints", s.checkpoints);
  }
};

}  // namespace det::bus
