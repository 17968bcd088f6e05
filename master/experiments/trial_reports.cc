#include "master/experiments/trial_reports.h"

#include <spdlog/spdlog.h>

#include <regex>
#include <set>

#include "bus/catalog/tasks.h"
#include "bus/rpc_client.h"
#include "master/cluster/registry_endpoint.h"
#include "master/experiments/experiments_endpoint.h"
#include "storage/metrics_repo.h"

namespace det::master {
namespace {

Result<TrialRun> RunOf(const std::string& allocation_id) {
  static const std::regex kTrialAllocation(R"(trial-(\d+)-(\d+)\.\d+)");
  std::smatch match;
  if (!std::regex_match(allocation_id, match, kTrialAllocation)) {
    return PermissionDenied("allocation " + allocation_id + " is not a trial's");
  }
  return TrialRun{allocation_id, std::stoll(match[1]), std::stoi(match[2])};
}

// PermissionDenied when the trial has moved on to a later run than the caller's. A later run in
// the caller's token than the one stored is let through: the master stores a run before it
// starts it, unless the database was away then.
// Fills in the run's experiment.
Status RefuseEndedRunIn(pqxx::work& tx, TrialRun& run) {
  DET_ASSIGN_OR_RETURN(storage::TrialRecord trial, storage::GetTrial(tx, run.trial_id));
  run.experiment_id = trial.experiment_id;
  if (run.run_id < trial.run_id) {
    return PermissionDenied("this token is for run " + std::to_string(run.run_id) + " of trial " +
                            std::to_string(run.trial_id) +
                            ", which has ended: the trial is on run " +
                            std::to_string(trial.run_id));
  }
  return Status::Ok();
}

}  // namespace

TrialReports::TrialReports(zmq::context_t& context, storage::DbConfig db, AllocationTokens tokens)
    : context_(context), db_(std::move(db), 4), tokens_(std::move(tokens)) {}

Result<TrialRun> TrialReports::Authenticate(const std::string& token, int64_t trial_id) {
  DET_ASSIGN_OR_RETURN(std::string allocation_id, tokens_.Verify(token));
  DET_ASSIGN_OR_RETURN(TrialRun run, RunOf(allocation_id));
  if (trial_id != 0 && run.trial_id != trial_id) {
    return PermissionDenied("this token is for trial " + std::to_string(run.trial_id) +
                            ", not trial " + std::to_string(trial_id));
  }
  DET_RETURN_IF_ERROR(db_.Run([&](pqxx::work& tx) { return RefuseEndedRunIn(tx, run); }));
  return run;
}

Result<bus::TrialSignal> TrialReports::ReportMetrics(const TrialRun& run, bus::TrialReport report) {
  DET_RETURN_IF_ERROR(db_.Run([&](pqxx::work& tx) {
    storage::RecordMetric(
        tx, {run.trial_id, report.kind, report.steps, run.run_id, report.metrics_json});
    return Status::Ok();
  }));
  return Tell(run, std::move(report));
}

Result<bus::TrialSignal> TrialReports::ReportCheckpoint(const TrialRun& run,
                                                        storage::CheckpointRecord checkpoint) {
  checkpoint.trial_id = run.trial_id;
  DET_RETURN_IF_ERROR(
      db_.Run([&](pqxx::work& tx) { return storage::SaveCheckpoint(tx, checkpoint); }));
  bus::TrialReport report{run.allocation_id, "checkpoint", checkpoint.steps_completed};
  report.checkpoint_uuid = checkpoint.uuid;
  return Tell(run, std::move(report));
}

Result<bus::TrialSignal> TrialReports::Tell(const TrialRun& run, bus::TrialReport report) {
  report.allocation_id = run.allocation_id;
  bus::RpcClient experiments(context_, kExperimentsEndpoint, {},
                             {.timeout = std::chrono::seconds(10), .attempts = 1});
  return experiments.Call<bus::TrialReport, bus::TrialSignal>(report);
}

Result<std::string> TrialReports::ModelDefinition(const TrialRun& run) {
  Result<std::optional<std::string>> archive =
      NotFound("trial " + std::to_string(run.trial_id) + " not found");
  (void)db_.Run([&](pqxx::work& tx) {
    auto trial = storage::GetTrial(tx, run.trial_id);
    if (trial.ok()) archive = storage::GetModelDefinition(tx, trial->experiment_id);
    return Status::Ok();
  });
  DET_RETURN_IF_ERROR(archive.status());
  if (!archive->has_value() || (*archive)->empty()) {
    return NotFound("the experiment has no model definition");
  }
  return std::move(**archive);
}

Status CheckMetricGroup(const std::string& group, const std::string& field) {
  static const std::set<std::string, std::less<>> kReportKinds = {"checkpoint", "exit", "progress",
                                                                  "ready"};
  const bool plain_name =
      !group.empty() && group.size() <= 64 &&
      group.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") == std::string::npos;
  if (plain_name && !kReportKinds.contains(group)) return Status::Ok();
  return InvalidArgument(
      field +
      ": expected \"training\", \"validation\" or a group of your own (1 to "
      "64 of a-z, 0-9 and '_'; not checkpoint, exit, progress or ready), not \"" +
      group + "\"");
}

Result<std::pair<storage::CheckpointRecord, int64_t>> TrialReports::Checkpoint(
    const TrialRun& run, const std::string& uuid) {
  auto found = AnyCheckpoint(uuid);
  if (found.ok() && found->second == run.experiment_id) return found;
  if (!found.ok() && found.status().code() != StatusCode::kNotFound) return found.status();
  return NotFound("checkpoint " + uuid + " not found in this trial's experiment");
}

Result<std::pair<storage::CheckpointRecord, int64_t>> TrialReports::AnyCheckpoint(
    const std::string& uuid) {
  Result<std::pair<storage::CheckpointRecord, int64_t>> found =
      NotFound("checkpoint " + uuid + " not found");
  DET_RETURN_IF_ERROR(db_.Run([&](pqxx::work& tx) {
    auto checkpoint = storage::FindCheckpoint(tx, uuid);
    if (!checkpoint) return Status::Ok();
    auto owner = storage::GetTrial(tx, checkpoint->trial_id);
    if (owner.ok()) found = std::pair{*checkpoint, owner->experiment_id};
    return Status::Ok();
  }));
  return found;
}

Result<std::string> TrialReports::StoredConfig(int64_t experiment_id) {
  Result<std::string> config =
      NotFound("experiment " + std::to_string(experiment_id) + " not found");
  DET_RETURN_IF_ERROR(db_.Run([&](pqxx::work& tx) {
    auto experiment = storage::GetExperiment(tx, experiment_id);
    if (experiment.ok()) config = std::move(experiment->config);
    return Status::Ok();
  }));
  return config;
}

Result<std::pair<storage::CheckpointRecord, int64_t>> TrialReports::SetCheckpointMetadata(
    const std::string& uuid, const std::string& metadata_json) {
  DET_RETURN_IF_ERROR(db_.Run(
      [&](pqxx::work& tx) { return storage::SetCheckpointMetadata(tx, uuid, metadata_json); }));
  return AnyCheckpoint(uuid);
}

Status TrialReports::PatchCheckpoint(const TrialRun& run, const std::string& uuid,
                                     const std::string& resources_json) {
  DET_ASSIGN_OR_RETURN(auto found, Checkpoint(run, uuid));
  storage::CheckpointRecord& checkpoint = found.first;
  checkpoint.resources_json = resources_json;
  checkpoint.state = resources_json == "{}" ? "DELETED" : "PARTIALLY_DELETED";
  return db_.Run([&](pqxx::work& tx) { return storage::SaveCheckpoint(tx, checkpoint); });
}

Status TrialReports::SetRunMetadata(const TrialRun& run, const std::string& metadata_json) {
  return db_.Run(
      [&](pqxx::work& tx) { return storage::SetTrialMetadata(tx, run.trial_id, metadata_json); });
}

Result<std::string> TrialReports::RunMetadata(int64_t trial_id) {
  Result<std::string> metadata = std::string();
  DET_RETURN_IF_ERROR(db_.Run([&](pqxx::work& tx) {
    metadata = storage::GetTrialMetadata(tx, trial_id);
    return Status::Ok();
  }));
  return metadata;
}

void TrialReports::KillAllocation(const std::string& allocation_id, const std::string& why) {
  spdlog::warn("{}: killing its task", why);
  bus::RpcClient registry(context_, kRegistryEndpoint, {},
                          {.timeout = std::chrono::seconds(5), .attempts = 2});
  auto killed = registry.Call<bus::TaskKillRequest, bus::TaskKillReply>(
      {allocation_id.substr(0, allocation_id.rfind('.'))});
  if (!killed.ok()) spdlog::warn("{}: not killed: {}", allocation_id, killed.status().message());
}

}  // namespace det::master
