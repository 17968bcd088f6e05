#pragma once

// Experiments, trials and checkpoints in Determined's shapes (bindings.py of Determined 0.38.1:
// v1Experiment, trialv1Trial, v1Checkpoint, v1MetricsWorkload), with what only this master knows
// beside them under camelCase names of their own (trialsActive, runId, taskState, ...).

#include <nlohmann/json.hpp>
#include <string>

#include "bus/catalog/experiments.h"

namespace det::master::http {

// v1Experiment: id, name, description, labels, state (STATE_ACTIVE ...), archived, config (the
// config as JSON), originalConfig (its YAML; the JSON when `config_yaml` is empty), jobId,
// numTrials, projectId, workspaceId, searcherType, searcherMetric, startTime, endTime, username,
// userId, resourcePool, progress; and trialsActive, trialsCompleted, trialsErrored, message,
// smallerIsBetter.
nlohmann::ordered_json ExperimentJson(const bus::ExperimentSummary& experiment,
                                      const std::string& config_yaml = "");
// trialv1Trial: id, experimentId, hparams, state, restarts, startTime, endTime,
// totalBatchesProcessed, bestValidation and latestValidation (v1MetricsWorkload), runnerState,
// taskId, taskIds; and requestId, runId, taskState, latestCheckpoint.
nlohmann::ordered_json TrialJson(const bus::TrialSummary& trial);
// v1Checkpoint: uuid, reportTime, resources (sizes as decimal text, as protobuf writes int64),
// metadata, state (STATE_COMPLETED ...), training {trialId, experimentId}; and stepsCompleted,
// sizeBytes.
nlohmann::ordered_json CheckpointJson(const bus::CheckpointSummary& checkpoint);
// v1MetricsWorkload of a report: {"metrics": {"avgMetrics"}, "totalBatches", "numInputs"}.
nlohmann::ordered_json MetricsWorkloadJson(int64_t total_batches, const std::string& metrics_json);

}  // namespace det::master::http
