#include "bus/catalog/experiments_json.h"

namespace det::bus {

using nlohmann::ordered_json;

ordered_json ToJson(const ExperimentSummary& e) {
  return {{"id", e.id},
          {"name", e.name},
          {"description", e.description},
          {"labels", e.labels},
          {"state", e.state},
          {"searcher", e.searcher},
          {"resource_pool", e.resource_pool},
          {"trials", e.trials},
          {"trials_active", e.trials_active},
          {"trials_completed", e.trials_completed},
          {"trials_errored", e.trials_errored},
          {"message", e.message},
          {"start_at", e.start_at},
          {"end_at", e.end_at},
          {"owner_id", e.owner_id},
          {"owner", e.owner},
          {"metric", e.metric},
          {"smaller_is_better", e.smaller_is_better},
          {"progress", e.progress},
          {"checkpoint_count", e.checkpoint_count},
          {"checkpoint_bytes", e.checkpoint_bytes}};
}

namespace {

// Determined's v1MetricsWorkload: {"totalBatches", "metrics": {"avgMetrics"}}; null for none.
// `steps` 0: the validation's step is not known (the best one's).
ordered_json ValidationJson(int64_t steps, const std::string& metrics_json) {
  if (metrics_json.empty()) return nullptr;
  ordered_json validation{
      {"metrics", {{"avgMetrics", ordered_json::parse(metrics_json, nullptr, false)}}}};
  if (steps > 0) validation["totalBatches"] = steps;
  return validation;
}

}  // namespace

ordered_json ToJson(const TrialSummary& t) {
  auto parsed = [](const std::string& text) {
    return text.empty() ? ordered_json() : ordered_json::parse(text, nullptr, false);
  };
  return {{"id", t.id},
          {"experiment_id", t.experiment_id},
          {"request_id", t.request_id},
          {"state", t.state},
          {"task_state", t.task_state},
          {"hparams", parsed(t.hparams_json)},
          {"restarts", t.restarts},
          {"run_id", t.run_id},
          {"task_id", t.task_id},
          {"steps_completed", t.steps_completed},
          {"best_validation", parsed(t.best_validation_json)},
          {"latest_checkpoint", t.latest_checkpoint},
          {"start_at", t.start_at},
          {"end_at", t.end_at},
          {"runner_state", t.runner_state},
          // Determined's v1Trial fields that its library reads (core_context.train's
          // _get_last_validation: latestValidation.totalBatches).
          {"experimentId", t.experiment_id},
          {"latestValidation", ValidationJson(t.steps_completed, t.latest_validation_json)},
          {"bestValidation", ValidationJson(0, t.best_validation_json)},
          {"runnerState", t.runner_state}};
}

ordered_json ToJson(const ExperimentGetReply& reply) {
  ordered_json trials = ordered_json::array();
  for (const auto& trial : reply.trials) trials.push_back(ToJson(trial));
  return {
      {"experiment", ToJson(reply.experiment)}, {"trials", trials}, {"config", reply.config_yaml}};
}

nlohmann::ordered_json ToJson(const CheckpointSummary& checkpoint) {
  return {{"uuid", checkpoint.uuid},
          {"trial_id", checkpoint.trial_id},
          {"steps_completed", checkpoint.steps_completed},
          {"state", checkpoint.state},
          {"size_bytes", checkpoint.size_bytes},
          {"reported_at", checkpoint.reported_at}};
}

}  // namespace det::bus
