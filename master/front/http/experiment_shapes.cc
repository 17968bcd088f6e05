#include "master/front/http/experiment_shapes.h"

#include "master/front/http/cluster_shapes.h"

namespace det::master::http {
namespace {

using nlohmann::ordered_json;

ordered_json Parsed(const std::string& text, ordered_json fallback) {
  if (text.empty()) return fallback;
  ordered_json parsed = ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
  return parsed.is_discarded() ? fallback : parsed;
}

}  // namespace

ordered_json MetricsWorkloadJson(int64_t total_batches, const std::string& metrics_json) {
  return {{"metrics", {{"avgMetrics", Parsed(metrics_json, ordered_json::object())}}},
          {"totalBatches", total_batches},
          {"numInputs", 0}};
}

ordered_json ExperimentJson(const bus::ExperimentSummary& e, const std::string& config_yaml) {
  ordered_json json = {{"id", e.id},
                       {"name", e.name},
                       {"description", e.description},
                       {"labels", e.labels},
                       {"state", "STATE_" + e.state},
                       {"archived", false},
                       {"config", Parsed(e.config_json, ordered_json::object())},
                       {"originalConfig", config_yaml.empty() ? e.config_json : config_yaml},
                       {"jobId", "experiment-" + std::to_string(e.id)},
                       {"numTrials", e.trials},
                       {"projectId", kDefaultWorkspaceId},
                       {"projectOwnerId", 1},
                       {"projectName", "Uncategorized"},
                       {"workspaceId", kDefaultWorkspaceId},
                       {"workspaceName", "Uncategorized"},
                       {"searcherType", e.searcher},
                       {"searcherMetric", e.metric},
                       {"startTime", TimeText(e.start_at)},
                       {"username", e.owner},
                       {"displayName", e.owner},
                       {"userId", e.owner_id},
                       {"resourcePool", e.resource_pool},
                       {"progress", e.progress},
                       {"parentArchived", false},
                       {"trialsActive", e.trials_active},
                       {"trialsCompleted", e.trials_completed},
                       {"trialsErrored", e.trials_errored},
                       {"message", e.message},
                       {"smallerIsBetter", e.smaller_is_better},
                       // Determined's totals (int64 as decimal text): its checkpoints that still
                       // have files, what save_* kept and the model registry holds.
                       {"checkpointCount", e.checkpoint_count},
                       {"checkpointSize", std::to_string(e.checkpoint_bytes)}};
  if (e.end_at > 0) json["endTime"] = TimeText(e.end_at);
  return json;
}

ordered_json TrialJson(const bus::TrialSummary& t) {
  ordered_json json = {
      {"id", t.id},
      {"experimentId", t.experiment_id},
      {"hparams", Parsed(t.hparams_json, ordered_json::object())},
      {"state", "STATE_" + t.state},
      {"restarts", t.restarts},
      {"startTime", TimeText(t.start_at)},
      {"totalBatchesProcessed", t.steps_completed},
      {"runnerState", t.runner_state},
      {"taskId", t.task_id},
      {"taskIds", t.task_id.empty() ? ordered_json::array() : ordered_json::array({t.task_id})},
      {"requestId", t.request_id},
      {"runId", t.run_id},
      {"taskState", t.task_state},
      {"latestCheckpoint", t.latest_checkpoint}};
  if (t.end_at > 0) json["endTime"] = TimeText(t.end_at);
  if (!t.best_validation_json.empty()) {
    // The step of the best validation is not kept: its totalBatches is the trial's.
    json["bestValidation"] = MetricsWorkloadJson(t.steps_completed, t.best_validation_json);
  }
  if (!t.latest_validation_json.empty()) {
    json["latestValidation"] = MetricsWorkloadJson(t.steps_completed, t.latest_validation_json);
  }
  return json;
}

ordered_json CheckpointJson(const bus::CheckpointSummary& c) {
  ordered_json resources = Parsed(c.resources_json, ordered_json::object());
  if (!resources.is_object()) resources = ordered_json::object();
  for (auto& [path, size] : resources.items()) {
    if (size.is_number_integer()) size = std::to_string(size.get<int64_t>());
  }
  return {{"uuid", c.uuid},
          {"reportTime", TimeText(c.reported_at)},
          {"resources", resources},
          {"metadata", Parsed(c.metadata_json, ordered_json::object())},
          {"state", "STATE_" + c.state},
          {"training",
           {{"trialId", c.trial_id},
            {"experimentId", c.experiment_id},
            {"trainingMetrics", {{"avgMetrics", ordered_json::object()}}},
            {"validationMetrics", {{"avgMetrics", ordered_json::object()}}}}},
          {"stepsCompleted", c.steps_completed},
          {"sizeBytes", c.size_bytes}};
}

}  // namespace det::master::http
