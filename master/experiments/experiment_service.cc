#include "master/experiments/experiment_service.h"

#include <spdlog/spdlog.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <random>
#include <utility>

#include "bus/catalog/workload.h"
#include "common/thread_name.h"
#include "common/yaml_json.h"
#include "master/cluster/agent_registry.h"
#include "master/experiments/entrypoint_files.h"
#include "master/experiments/trial_launch.h"
#include "storage/experiments_repo.h"

namespace det::master {
namespace {

using experiment::Experiment;
using experiment::Trial;

Result<YAML::Node> LoadConfigText(const std::string& yaml) {
  try {
    return YAML::Load(yaml);
  } catch (const YAML::Exception& e) {
    return InvalidArgument("experiment config is not YAML: " + std::string(e.what()));
  }
}

// The config as JSON text ("{}" when it does not load, which a stored config always does).
std::string ConfigJsonOf(const std::string& yaml) {
  Result<YAML::Node> doc = LoadConfigText(yaml);
  return doc.ok() ? YamlToJson(*doc).dump() : "{}";
}

// A new experiment's config with master.yaml's defaults merged in: the text stored (unchanged,
// comments and all, when nothing was merged) and what it says.
struct MergedConfig {
  std::string yaml;
  experiment::ExperimentConfig config;
};

Result<MergedConfig> MergeClusterDefaults(const std::string& yaml, const YAML::Node& storage,
                                          bool fill_fields) {
  DET_ASSIGN_OR_RETURN(YAML::Node doc, LoadConfigText(yaml));
  if (!doc.IsMap()) return InvalidArgument("the experiment config must be a YAML mapping");
  DET_RETURN_IF_ERROR(CheckYamlDocument(doc));
  const YAML::Node merged = experiment::WithClusterDefaults(doc, storage, fill_fields);
  DET_ASSIGN_OR_RETURN(experiment::ExperimentConfig config,
                       experiment::ParseExperimentConfig(merged));
  if (!storage.IsMap() ||
      (doc["checkpoint_storage"].IsDefined() &&
       YAML::Dump(doc["checkpoint_storage"]) == YAML::Dump(merged["checkpoint_storage"]))) {
    return MergedConfig{yaml, std::move(config)};
  }
  YAML::Emitter out;
  out << merged;
  return MergedConfig{std::string(out.c_str()) + "\n", std::move(config)};
}

// A continued experiment's config text: the stored one with the request's overrides (a mapping,
// or nothing, then its --config settings) merged over it. The search stays what it was: its
// searcher and the hyperparameters its trial has may not change.
Result<std::string> ContinuedConfigText(const std::string& stored_yaml,
                                        const bus::ExperimentContinueRequest& request) try {
  DET_ASSIGN_OR_RETURN(YAML::Node stored, LoadConfigText(stored_yaml));
  DET_ASSIGN_OR_RETURN(YAML::Node given, LoadConfigText(request.override_config_yaml));
  if (given.IsDefined() && !given.IsNull()) {
    if (!given.IsMap()) {
      return InvalidArgument("overrideConfig: expected a YAML mapping of config fields");
    }
    DET_RETURN_IF_ERROR(CheckYamlDocument(given));  // before anything walks it
  }
  DET_ASSIGN_OR_RETURN(YAML::Node overrides, experiment::WithSettings(given, request.settings));
  if (overrides.size() == 0) return stored_yaml;
  DET_RETURN_IF_ERROR(CheckYamlDocument(overrides));  // the --config values too
  const YAML::Node& before = stored;
  const YAML::Node merged = experiment::WithOverrides(stored, overrides);
  if (!merged["searcher"].IsMap()) return InvalidArgument("searcher: expected a mapping");
  auto same = [&](const char* field) {
    return YamlToJson(before[field]) == YamlToJson(merged[field]);
  };
  if (!same("hyperparameters") || !same("checkpoint_storage") ||
      YamlToJson(before["searcher"]["name"]) != YamlToJson(merged["searcher"]["name"])) {
    return InvalidArgument(
        "overrideConfig: a continued experiment keeps its search and its checkpoints: "
        "searcher.name, hyperparameters and checkpoint_storage cannot change (create a new "
        "experiment with searcher.source_trial_id)");
  }
  YAML::Emitter out;
  out << merged;
  return std::string(out.c_str()) + "\n";
} catch (const YAML::Exception& e) {
  return InvalidArgument(std::string("overrideConfig: ") + e.what());
}

// A trial as stored, with its searcher position from the experiment's saved state.
Trial TrialOf(const storage::TrialRecord& record, const nlohmann::json& saved_trials) {
  Trial trial;
  trial.id = record.id;
  trial.experiment_id = record.experiment_id;
  trial.request_id = std::stoll(record.request_id);
  trial.hparams = nlohmann::json::parse(record.hparams_json, nullptr, false);
  trial.state = record.state;
  trial.restarts = record.restarts;
  trial.run_id = record.run_id;
  trial.start_ns = record.start_ns;
  trial.end_ns = record.end_ns.value_or(0);
  const std::string key = std::to_string(record.id);
  if (saved_trials.contains(key)) {
    trial.searcher_steps = saved_trials[key].value("searcher_steps", int64_t{0});
    trial.searcher_stopped = saved_trials[key].value("searcher_stopped", false);
    trial.exited_early =
        experiment::ExitReasonNamed(saved_trials[key].value("exited_early", std::string()));
    trial.stopped_for_pause = saved_trials[key].value("stopped_for_pause", false);
  }
  // A run was live when the previous master stopped unless the trial was over or paused.
  trial.running = trial.run_id > 0 && !experiment::IsTerminal(trial.state) &&
                  trial.state != experiment::kPaused;
  return trial;
}

}  // namespace

ExperimentService::ExperimentService(zmq::context_t& context, const Clock& clock,
                                     ExperimentRecords& records, TrialLaunchOptions launch,
                                     bus::EventBrokerEndpoints events)
    : clock_(clock),
      records_(records),
      launch_(std::move(launch)),
      server_(context, "experiments", clock, bus::SocketLimits{.max_message_bytes = 128 << 20}),
      // A submit is answered once stored, behind whatever the store had queued; a retry of one
      // still held gets its answer when it comes.
      registry_(context, AgentRegistry::kQueryEndpoint, {},
                bus::RpcClientConfig{.timeout = std::chrono::seconds(10), .attempts = 3}),
      tasks_(context, "master-experiments", std::move(events), {}, clock, {"task.state"}) {
  HandleRequests();
}

ExperimentService::~ExperimentService() { Stop(); }

Status ExperimentService::Bind() { return server_.Bind(kEndpoint, {}).status(); }

void ExperimentService::HandleRequests() {
  using bus::RpcContext;
  server_.Handle<bus::ExperimentCreateRequest, bus::ExperimentCreateReply>(
      [this](const RpcContext&, const bus::ExperimentCreateRequest& r) {
        return Committed([&] { return Create(r); });
      });
  server_.Handle<bus::ExperimentActionRequest, bus::ExperimentActionReply>(
      [this](const RpcContext&, const bus::ExperimentActionRequest& r) {
        return Committed([&] { return Act(r); });
      });
  server_.Handle<bus::ExperimentListRequest, bus::ExperimentList>(
      [this](const RpcContext&, const bus::ExperimentListRequest& r) { return List(r); });
  server_.Handle<bus::ExperimentGetRequest, bus::ExperimentGetReply>(
      [this](const RpcContext&,
             const bus::ExperimentGetRequest& r) -> Result<bus::ExperimentGetReply> {
        auto it = experiments_.find(r.id);
        if (it == experiments_.end()) {
          return NotFound("experiment " + std::to_string(r.id) + " not found");
        }
        bus::ExperimentGetReply reply{Summary(*it->second.experiment),
                                      {},
                                      experiment::RedactedConfig(it->second.config_yaml)};
        for (const auto& [id, trial] : it->second.experiment->trials()) {
          reply.trials.push_back(TrialSummaryOf(trial));
        }
        return reply;
      });
  server_.Handle<bus::ExperimentContinueRequest, bus::ExperimentContinueReply>(
      [this](const RpcContext&, const bus::ExperimentContinueRequest& r) {
        return Committed([&] { return Continue(r); });
      });
  server_.Handle<bus::TrialGetRequest, bus::TrialGetReply>(
      [this](const RpcContext&, const bus::TrialGetRequest& r) -> Result<bus::TrialGetReply> {
        for (const auto& [id, entry] : experiments_) {
          if (const Trial* trial = entry.experiment->FindTrial(r.id)) {
            return bus::TrialGetReply{TrialSummaryOf(*trial)};
          }
        }
        return NotFound("trial " + std::to_string(r.id) + " not found");
      });
  server_.Handle<bus::TrialKillRequest, bus::TrialGetReply>(
      [this](const RpcContext&, const bus::TrialKillRequest& r) {
        return Committed([&] { return KillTrial(r.id); });
      });
  server_.Handle<bus::CheckpointDeleteRequest, bus::CheckpointDeleteReply>(
      [this](const RpcContext&, const bus::CheckpointDeleteRequest& r) {
        return DeleteCheckpoints(r);
      });
  server_.Handle<bus::TrialReport, bus::TrialSignal>(
      [this](const RpcContext&, const bus::TrialReport& r) {
        return Committed([&] { return Report(r); });
      });
  server_.Handle<bus::TrialSignalRequest, bus::TrialSignal>(
      [this](const RpcContext&, const bus::TrialSignalRequest& r) {
        return Signal(r.allocation_id);
      });
  server_.Handle<bus::TrialSignalsRequest, bus::TrialSignals>(
      [this](const RpcContext&, const bus::TrialSignalsRequest& r) -> Result<bus::TrialSignals> {
        (void)Commit();  // runs that ended are accounted for before their signals are read
        bus::TrialSignals reply;
        const MonoTime now = clock_.Now();
        for (const std::string& id : r.allocation_ids) {
          // Asked about because its long poll is parked: the run listens for the signal.
          if (auto run = runs_.find(id.substr(0, id.rfind('.'))); run != runs_.end()) {
            run->second.listening_until = now + std::chrono::seconds(1);
          }
          Result<bus::TrialSignal> signal = Signal(id);
          reply.signals.push_back({id, signal.ok(), signal.ok() ? *signal : bus::TrialSignal{}});
        }
        return reply;
      });
}

Result<bus::ExperimentCreateReply> ExperimentService::Create(
    const bus::ExperimentCreateRequest& request) {
  if (static_cast<int64_t>(request.model_definition.data.size()) >
      bus::ExperimentCreateRequest::kMaxModelDefinitionBytes) {
    return InvalidArgument("model definition is " +
                           std::to_string(request.model_definition.data.size() >> 20) +
                           " MiB compressed; the limit is 96 MiB: leave data sets out of the "
                           "model folder");
  }
  DET_ASSIGN_OR_RETURN(MergedConfig merged,
                       MergeClusterDefaults(request.config_yaml, launch_.default_checkpoint_storage,
                                            launch_.fill_checkpoint_storage_fields));
  experiment::ExperimentConfig& config = merged.config;
  const uint32_t seed = config.experiment_seed.value_or(std::random_device{}());
  DET_ASSIGN_OR_RETURN(auto search,
                       searcher::Searcher::Make(config.searcher, config.hyperparameters, seed));
  DET_ASSIGN_OR_RETURN(const std::string warm_start, WarmStartOf(config.searcher));
  if (!request.model_definition.data.empty()) {
    // A model definition that does not read is refused when a trial unpacks it; here it only
    // goes unchecked.
    if (auto files = experiments::ReadModelFiles(request.model_definition.data, false);
        files.ok()) {
      for (std::string& warning : experiments::EntrypointWarnings(config.entrypoint, *files)) {
        config.warnings.push_back(std::move(warning));
      }
    }
  }
  if (request.dry_run) return bus::ExperimentCreateReply{0, config.warnings};
  DET_ASSIGN_OR_RETURN(
      const int64_t id,
      records_.CreateExperiment(
          {config.name, merged.yaml, std::string(experiment::kActive),
           request.owner_id > 0 ? std::optional<int64_t>(request.owner_id) : std::nullopt,
           request.model_definition.data, config.log_retention_days}));
  Entry& entry = experiments_[id];
  entry.config_yaml = merged.yaml;
  entry.config_json = ConfigJsonOf(entry.config_yaml);
  entry.start_ns = NowNs();
  entry.owner_id = request.owner_id;
  entry.owner = request.owner;
  entry.experiment =
      std::make_unique<Experiment>(id, std::move(config), std::move(search), Effects());
  entry.experiment->StartTrialsFrom(warm_start);
  Status started = entry.experiment->Start(NowNs());
  if (!started.ok()) spdlog::error("experiment {}: {}", id, started.message());
  spdlog::info("experiment {} created ({} trials to start with)", id,
               entry.experiment->trials().size());
  for (const std::string& warning : entry.experiment->config().warnings) {
    spdlog::warn("experiment {}: {}", id, warning);
  }
  return bus::ExperimentCreateReply{id, entry.experiment->config().warnings};
}

Result<std::string> ExperimentService::WarmStartOf(const searcher::SearcherConfig& searcher) {
  if (searcher.source_trial_id > 0) {
    DET_ASSIGN_OR_RETURN(std::optional<storage::CheckpointRecord> latest,
                         records_.LatestCheckpointOf(searcher.source_trial_id));
    if (!latest) {
      return InvalidArgument("searcher.source_trial_id: trial " +
                             std::to_string(searcher.source_trial_id) +
                             " has no checkpoint to start from");
    }
    return latest->uuid;
  }
  const std::string& uuid = searcher.source_checkpoint_uuid;
  if (uuid.empty()) return std::string();
  DET_ASSIGN_OR_RETURN(std::optional<storage::CheckpointRecord> found, records_.Checkpoint(uuid));
  if (!found) return InvalidArgument("searcher.source_checkpoint_uuid: no checkpoint " + uuid);
  if (found->state != "COMPLETED" && found->state != "PARTIALLY_DELETED") {
    return InvalidArgument("searcher.source_checkpoint_uuid: checkpoint " + uuid + " is " +
                           found->state + "; only a COMPLETED one can be started from");
  }
  return uuid;
}

Result<bus::CheckpointDeleteReply> ExperimentService::DeleteCheckpoints(
    const bus::CheckpointDeleteRequest& request) {
  if (request.uuids.empty()) return InvalidArgument("checkpointUuids: name at least one");
  DET_ASSIGN_OR_RETURN(std::vector<std::string> registered,
                       records_.RegisteredAmong(request.uuids));
  if (!registered.empty()) {
    return FailedPrecondition("checkpoint " + registered.front() +
                              " is registered in the model registry: delete its model versions "
                              "first");
  }
  std::map<int64_t, std::vector<std::string>> by_experiment;  // all checked before any goes
  for (const std::string& uuid : request.uuids) {
    DET_ASSIGN_OR_RETURN(std::optional<storage::CheckpointRecord> checkpoint,
                         records_.Checkpoint(uuid));
    if (!checkpoint) return NotFound("checkpoint " + uuid + " not found");
    if (checkpoint->state == "DELETED") continue;
    if (checkpoint->state != "COMPLETED" && checkpoint->state != "PARTIALLY_DELETED") {
      return FailedPrecondition("checkpoint " + uuid + " is " + checkpoint->state +
                                ": only a COMPLETED one can be deleted");
    }
    auto owner = std::find_if(experiments_.begin(), experiments_.end(), [&](const auto& entry) {
      return entry.second.experiment->FindTrial(checkpoint->trial_id) != nullptr;
    });
    if (owner == experiments_.end()) return NotFound("checkpoint " + uuid + "'s trial not found");
    const Entry& entry = owner->second;
    if (!request.requester_admin && entry.owner_id != 0 && entry.owner_id != request.requester_id) {
      return PermissionDenied("checkpoint " + uuid + " belongs to experiment " +
                              std::to_string(owner->first) + " of \"" + entry.owner +
                              "\": only its owner or an admin may delete it");
    }
    by_experiment[owner->first].push_back(uuid);
  }
  bus::CheckpointDeleteReply reply;
  for (auto& [experiment_id, uuids] : by_experiment) {
    reply.removing += static_cast<int32_t>(uuids.size());
    DET_RETURN_IF_ERROR(collector_.Remove(*Find(experiment_id), std::move(uuids)));
  }
  return reply;
}

Result<bus::TrialGetReply> ExperimentService::KillTrial(int64_t trial_id) {
  for (auto& [id, entry] : experiments_) {
    if (!entry.experiment->FindTrial(trial_id)) continue;
    DET_RETURN_IF_ERROR(entry.experiment->KillTrial(trial_id, NowNs()));
    return bus::TrialGetReply{TrialSummaryOf(*entry.experiment->FindTrial(trial_id))};
  }
  return NotFound("trial " + std::to_string(trial_id) + " not found");
}

Status ExperimentService::Restore() {
  DET_ASSIGN_OR_RETURN(const std::vector<storage::ExperimentRecord> records,
                       records_.Experiments());
  for (const storage::ExperimentRecord& record : records) {
    Status restored = RestoreOne(record);
    if (!restored.ok()) {
      spdlog::error("experiment {} cannot be resumed: {}", record.id, restored.message());
    }
  }
  (void)Commit();  // what PostgreSQL does not take now, the loop stores later
  return Status::Ok();
}

Status ExperimentService::RestoreOne(const storage::ExperimentRecord& record) {
  DET_ASSIGN_OR_RETURN(experiment::ExperimentConfig config,
                       experiment::ParseExperimentConfigText(record.config));
  const nlohmann::json saved =
      nlohmann::json::parse(record.searcher_state.value_or("{}"), nullptr, false);
  const bool fresh = !saved.is_object() || !saved.contains("searcher");  // crashed before a save
  DET_ASSIGN_OR_RETURN(auto search,
                       fresh ? searcher::Searcher::Make(config.searcher, config.hyperparameters,
                                                        config.experiment_seed.value_or(0))
                             : searcher::Searcher::Restore(config.searcher, config.hyperparameters,
                                                           saved["searcher"]));
  const nlohmann::json saved_trials =
      fresh ? nlohmann::json::object() : saved.value("trials", nlohmann::json::object());
  // The validations are replayed: the search gets those it missed.
  DET_ASSIGN_OR_RETURN(StoredTrials stored, records_.TrialsOf(record.id));
  // A warm start's checkpoint again (source_trial_id: that trial's latest now); one gone since
  // leaves the trials that have none of their own starting afresh, said in the log.
  Result<std::string> warm_start = WarmStartOf(config.searcher);
  if (!warm_start.ok()) {
    spdlog::warn("experiment {}: {}; its trials without a checkpoint start afresh", record.id,
                 warm_start.status().message());
  }
  std::vector<Trial> trials;
  for (const storage::TrialRecord& row : stored.trials) {
    Trial trial = TrialOf(row, saved_trials);
    trial.latest_checkpoint = warm_start.ok() ? *warm_start : "";
    if (auto latest = stored.latest_checkpoints.find(trial.id);
        latest != stored.latest_checkpoints.end()) {
      trial.latest_checkpoint = latest->second.uuid;
      trial.latest_checkpoint_steps = latest->second.steps_completed;
    }
    trials.push_back(std::move(trial));
  }
  const bool over = experiment::IsTerminal(record.state);
  Entry& entry = experiments_[record.id];
  entry.config_yaml = record.config;
  entry.config_json = ConfigJsonOf(entry.config_yaml);
  entry.start_ns = record.start_ns;
  entry.end_ns = record.end_ns.value_or(0);
  entry.owner_id = record.owner_id.value_or(0);
  entry.owner = record.owner;
  entry.experiment =
      std::make_unique<Experiment>(record.id, std::move(config), std::move(search), Effects());
  if (warm_start.ok()) entry.experiment->StartTrialsFrom(*warm_start);
  entry.experiment->Restore(record.state, std::move(trials));
  for (const auto& [id, trial] : entry.experiment->trials()) {
    if (trial.running && !over) runs_[trial.TaskId()] = {record.id, id, "", false};
    // Paused while its run was still finishing (a deferred kill the previous master held): the
    // run is stopped now, whether or not it is still there.
    if (trial.state == experiment::kPaused && trial.run_id > 0) {
      stop_after_restore_.push_back(trial.TaskId());
    } else if (trial.running && !over && !entry.experiment->StopReason(id).empty()) {
      // Told to stop by the previous master, which may have died before its stop went out: a
      // kill is sent again at once; a stop the run may finish by itself (it checkpoints on the
      // signal) gets preemption_timeout again.
      if (trial.exited_early || entry.experiment->state() == experiment::kStoppingKilled) {
        stop_after_restore_.push_back(trial.TaskId());
      } else {
        runs_[trial.TaskId()].kill_at = clock_.Now() + launch_.preemption_timeout;
      }
    }
  }
  if (fresh && !over) (void)entry.experiment->Start(NowNs());
  for (const storage::MetricPoint& point : stored.validations) {
    (void)entry.experiment->Validated(point.trial_id, point.step,
                                      nlohmann::json::parse(point.metrics_json), NowNs());
  }
  if (!over) {
    spdlog::info("experiment {} resumed ({}, {} trials)", record.id, record.state,
                 entry.experiment->trials().size());
  }
  if (record.state == experiment::kDeleting) {
    collector_.Delete(*entry.experiment);
  } else {
    to_collect_.insert(record.id);  // what a previous master's collection left
  }
  return Status::Ok();
}

Result<bus::ExperimentList> ExperimentService::List(const bus::ExperimentListRequest& request) {
  if (request.offset < 0) return InvalidArgument("offset: must not be negative");
  if (request.limit < 0 || request.limit > 10000) {
    return InvalidArgument("limit: " + std::to_string(request.limit) + " is outside 0..10000");
  }
  bus::ExperimentList list;
  for (auto it = experiments_.rbegin(); it != experiments_.rend(); ++it) {
    bus::ExperimentSummary summary = Summary(*it->second.experiment);
    if (!bus::MatchesFilters(summary, request)) continue;
    const bool in_page = list.total >= request.offset &&
                         (request.limit == 0 || list.total < request.offset + request.limit);
    ++list.total;
    if (in_page) list.experiments.push_back(std::move(summary));
  }
  return list;
}

Result<bus::ExperimentActionReply> ExperimentService::Act(
    const bus::ExperimentActionRequest& request) {
  Experiment* experiment = Find(request.id);
  if (!experiment) return NotFound("experiment " + std::to_string(request.id) + " not found");
  DET_RETURN_IF_ERROR(experiment->Act(request.action, NowNs()).status());
  DET_RETURN_IF_ERROR(Commit());  // DELETING is stored before anything is removed
  if (request.action == "delete") collector_.Delete(*experiment);
  return bus::ExperimentActionReply{experiment->state()};
}

Result<bus::ExperimentContinueReply> ExperimentService::Continue(
    const bus::ExperimentContinueRequest& request) {
  Experiment* experiment = Find(request.id);
  if (!experiment) return NotFound("experiment " + std::to_string(request.id) + " not found");
  DET_RETURN_IF_ERROR(experiment->CheckContinuable());
  Entry& entry = experiments_.at(request.id);
  DET_ASSIGN_OR_RETURN(std::string yaml, ContinuedConfigText(entry.config_yaml, request));
  DET_ASSIGN_OR_RETURN(MergedConfig merged,
                       MergeClusterDefaults(yaml, launch_.default_checkpoint_storage,
                                            launch_.fill_checkpoint_storage_fields));
  experiment::ExperimentConfig& config = merged.config;
  DET_ASSIGN_OR_RETURN(auto search,
                       searcher::Searcher::Restore(config.searcher, config.hyperparameters,
                                                   experiment->SaveState()["searcher"]));
  DET_RETURN_IF_ERROR(search->ReopenSingleTrial());
  // Where the trial resumes: its latest checkpoint still stored (GC or a delete may have taken
  // the one it last reported), else the warm start's, else nothing.
  const int64_t trial_id = experiment->trials().begin()->first;
  DET_ASSIGN_OR_RETURN(std::optional<storage::CheckpointRecord> latest,
                       records_.LatestCheckpointOf(trial_id));
  std::vector<std::string> warnings = config.warnings;
  DET_RETURN_IF_ERROR(
      experiment->Continue(std::move(config), std::move(search),
                           latest ? latest->uuid : experiment->warm_start_checkpoint(),
                           latest ? latest->steps_completed : 0));
  entry.config_yaml = merged.yaml;
  entry.config_json = ConfigJsonOf(entry.config_yaml);
  entry.end_ns = 0;
  continued_.insert(request.id);
  spdlog::info("experiment {} continued", request.id);
  return bus::ExperimentContinueReply{experiment->state(), std::move(warnings)};
}

Result<ExperimentService::RunRef> ExperimentService::RunOf(const std::string& allocation_id) {
  // Allocation ids are "<task id>.<n>".
  auto run = runs_.find(allocation_id.substr(0, allocation_id.rfind('.')));
  Experiment* experiment = run == runs_.end() ? nullptr : Find(run->second.experiment_id);
  const Trial* trial = experiment ? experiment->FindTrial(run->second.trial_id) : nullptr;
  if (!trial) return NotFound("allocation " + allocation_id + " is not a live trial run");
  return RunRef{experiment, trial, &run->second};
}

Result<bus::TrialSignal> ExperimentService::Report(const bus::TrialReport& report) {
  DET_ASSIGN_OR_RETURN(RunRef run, RunOf(report.allocation_id));
  Experiment* experiment = run.experiment;
  const int64_t trial_id = run.trial->id;
  if (report.kind == "validation") {
    auto metrics = nlohmann::json::parse(report.metrics_json, nullptr, false);
    if (!metrics.is_object()) return InvalidArgument("metrics: expected a JSON object");
    DET_RETURN_IF_ERROR(experiment->Validated(trial_id, report.steps, metrics, NowNs()));
  } else if (report.kind == "checkpoint") {
    experiment->CheckpointSaved(trial_id, report.checkpoint_uuid, report.steps);
    ResumeFrom(run.trial->TaskId(), report.checkpoint_uuid, report.steps);
  } else if (report.kind == "exit") {
    auto reason = experiment::ExitReasonNamed(report.reason);
    if (!reason) {
      return InvalidArgument("reason: \"" + report.reason +
                             "\" is not one of ERRORED, INVALID_HP, USER_CANCELED");
    }
    experiment->ExitedEarly(trial_id, *reason, NowNs());
  } else if (report.kind == "runner_state") {
    experiment->RunnerStateReported(trial_id, report.reason);
  }  // training metrics, a custom group's, progress and ready: stored or nothing to decide
  FinishEndedRuns();
  return Signal(report.allocation_id);
}

Result<bus::TrialSignal> ExperimentService::Signal(const std::string& allocation_id) {
  DET_ASSIGN_OR_RETURN(RunRef run, RunOf(allocation_id));
  bus::TrialSignal signal{run.trial->id, false, run.experiment->StopReason(run.trial->id)};
  if (signal.reason.empty() && run.live->preempting) {
    signal.reason = run.live->preempt_reason.empty()
                        ? "preempted by the scheduler for more urgent work"
                        : run.live->preempt_reason;
  }
  signal.should_stop = !signal.reason.empty();
  return signal;
}

Experiment* ExperimentService::Find(int64_t experiment_id) {
  auto it = experiments_.find(experiment_id);
  return it == experiments_.end() ? nullptr : it->second.experiment.get();
}

bus::ExperimentSummary ExperimentService::Summary(const Experiment& experiment) const {
  const experiment::ExperimentConfig& config = experiment.config();
  const Entry& entry = experiments_.at(experiment.id());
  bus::ExperimentSummary summary{experiment.id(),
                                 config.name,
                                 config.description,
                                 config.labels,
                                 experiment.state(),
                                 config.searcher.name,
                                 config.resources.resource_pool};
  summary.message = experiment.message();
  summary.start_at = entry.start_ns;
  summary.end_at = entry.end_ns;
  summary.owner_id = entry.owner_id;
  summary.owner = entry.owner;
  summary.config_json = entry.config_json;
  summary.metric = config.searcher.metric;
  summary.smaller_is_better = config.searcher.smaller_is_better;
  double trained = 0;
  for (const auto& [id, trial] : experiment.trials()) {
    ++summary.trials;
    summary.trials_active += trial.state == experiment::kActive ? 1 : 0;
    summary.trials_completed += trial.state == experiment::kCompleted ? 1 : 0;
    summary.trials_errored += trial.state == experiment::kError ? 1 : 0;
    const bool over = experiment::IsTerminal(trial.state);
    trained += over || config.searcher.max_time <= 0
                   ? (over ? 1.0 : 0.0)
                   : std::min(1.0, static_cast<double>(trial.steps_completed) /
                                       static_cast<double>(config.searcher.max_time));
  }
  const int expected = std::max(summary.trials, config.searcher.max_trials);
  summary.progress =
      experiment::IsTerminal(experiment.state()) ? 1.0 : (expected > 0 ? trained / expected : 0.0);
  return summary;
}

bus::TrialSummary ExperimentService::TrialSummaryOf(const Trial& trial) const {
  bus::TrialSummary summary;
  summary.id = trial.id;
  summary.experiment_id = trial.experiment_id;
  summary.request_id = trial.request_id;
  summary.state = trial.state;
  summary.hparams_json = trial.hparams.dump();
  summary.restarts = trial.restarts;
  summary.run_id = trial.run_id;
  summary.task_id = trial.run_id > 0 ? trial.TaskId() : "";
  if (auto run = runs_.find(summary.task_id); run != runs_.end()) {
    summary.task_state = run->second.task_state;
  }
  summary.steps_completed = trial.steps_completed;
  if (!trial.best_validation.is_null()) summary.best_validation_json = trial.best_validation.dump();
  if (!trial.latest_validation.is_null()) {
    summary.latest_validation_json = trial.latest_validation.dump();
  }
  summary.runner_state = trial.runner_state;
  summary.latest_checkpoint = trial.latest_checkpoint;
  summary.start_at = trial.start_ns;
  summary.end_at = trial.end_ns;
  return summary;
}

void ExperimentService::OnTaskState(const bus::TaskSummary& task) {
  auto it = runs_.find(task.id);
  if (it == runs_.end()) return;
  LiveRun& run = it->second;
  if (run.task_state == bus::kWorkloadTerminated) return;  // already accounted for
  run.task_state = task.state;
  run.preempting = task.preempting;
  run.preempt_reason = task.preempting ? task.message : "";
  if (task.state == bus::kWorkloadTerminated) {
    ended_.push_back(
        {run.experiment_id, run.trial_id, {task.exit_code, task.failure_type, task.message}});
  }
}

void ExperimentService::PollRuns() {
  if (runs_.empty()) return;
  bus::TaskListRequest request;
  for (const auto& [task_id, run] : runs_) request.task_ids.push_back(task_id);
  auto listed = registry_.Call<bus::TaskListRequest, bus::TaskList>(request);
  if (!listed.ok()) {
    spdlog::warn("experiments: cannot read trial tasks: {}", listed.status().message());
    reconcile_ = true;  // try again at the next turn
    return;
  }
  std::set<std::string> seen;
  for (const bus::TaskSummary& task : listed->tasks) {
    seen.insert(task.id);
    OnTaskState(task);
  }
  for (auto& [task_id, run] : runs_) {
    if (seen.count(task_id) || run.task_state == bus::kWorkloadTerminated) continue;
    // The registry no longer has it (it ended while no master was running, say): as if the
    // cluster lost it, so it runs again without counting against the trial.
    run.task_state = bus::kWorkloadTerminated;
    ended_.push_back({run.experiment_id,
                      run.trial_id,
                      {-1, std::string(bus::kFailureAgentFailed), "the run's task is gone"}});
  }
}

void ExperimentService::FollowTaskEvents() {
  std::vector<bus::EventSubscriber::Update> updates;
  tasks_.Receive(&updates);
  tasks_.Tick(&updates);
  for (const auto& update : updates) {
    if (update.kind == bus::EventSubscriber::Update::Kind::kReset) {
      reconcile_ = true;  // events may have been missed: ask the registry once
      continue;
    }
    auto event = update.event.Decode<bus::TaskStateEvent>();
    if (event.ok()) OnTaskState(event->task);
  }
  // A safety net beside the events: every kReconcileEvery the registry is asked anyway.
  const MonoTime now = clock_.Now();
  if ((reconcile_ && tasks_.synced()) || now >= next_reconcile_) {
    reconcile_ = false;
    next_reconcile_ = now + kReconcileEvery;
    PollRuns();
  }
}

void ExperimentService::FinishEndedRuns() {
  while (!ended_.empty()) {
    EndedRun ended = std::move(ended_.front());
    ended_.erase(ended_.begin());
    Experiment* experiment = Find(ended.experiment_id);
    if (!experiment) continue;
    if (const Trial* trial = experiment->FindTrial(ended.trial_id)) runs_.erase(trial->TaskId());
    experiment->RunEnded(ended.trial_id, ended.end, NowNs());
    if (experiment::IsTerminal(experiment->state())) {
      experiments_[experiment->id()].end_ns = NowNs();
    }
  }
}

Result<int64_t> ExperimentService::CreateTrial(int64_t experiment_id, const Trial&) {
  DET_ASSIGN_OR_RETURN(const int64_t id, records_.NextTrialId());
  new_trials_.insert({experiment_id, id});  // stored with the search that asked for it
  unsaved_trials_.insert({experiment_id, id});
  return id;
}

Result<std::optional<bus::AgentUserGroup>> ExperimentService::RunAs(int64_t owner_id) {
  std::optional<bus::AgentUserGroup> linked;
  if (owner_id > 0) {
    DET_ASSIGN_OR_RETURN(linked, records_.AgentAccountOf(owner_id));
  }
  return linked ? linked : launch_.default_task;
}

void ExperimentService::StartRun(const Trial& trial) {
  runs_[trial.TaskId()] = {trial.experiment_id, trial.id, "QUEUED", false};
  after_commit_.push_back([this, trial] { SubmitRun(trial); });
}

void ExperimentService::SubmitRun(const Trial& trial) {
  const Entry& entry = experiments_.at(trial.experiment_id);
  TrialRunIdentity identity{"{}", entry.owner};
  if (auto doc = LoadConfigText(entry.config_yaml); doc.ok()) {
    identity.config_json = YamlToJson(*doc).dump();
  }
  bus::TaskSubmitRequest submit{
      trial.TaskId(), "TRIAL", "experiment-" + std::to_string(trial.experiment_id),
      TrialTaskSpec(entry.experiment->config(), trial, launch_, identity)};
  // Never a more privileged account for want of the owner's link: no submit without it.
  auto run_as = RunAs(entry.owner_id);
  if (run_as.ok()) submit.spec.run_as = *run_as;
  submit.spec.owner = entry.owner;
  auto submitted =
      run_as.ok() ? registry_.Call<bus::TaskSubmitRequest, bus::CommandRunReply>(submit)
                  : Result<bus::CommandRunReply>(
                        run_as.status().WithContext("cannot read the owner's account on agents"));
  if (!submitted.ok()) {
    spdlog::error("trial {}: cannot submit its run: {}", trial.id, submitted.status().message());
    // It may have been taken without its answer reaching us: no run goes on with no trial.
    (void)registry_.Call<bus::TaskKillRequest, bus::TaskKillReply>(
        bus::TaskKillRequest{trial.TaskId()});
    ended_.push_back({trial.experiment_id,
                      trial.id,
                      {-1, std::string(bus::kFailureStartFailed), submitted.status().message()}});
  }
}

void ExperimentService::StopRun(const Trial& trial) {
  after_commit_.push_back([this, trial] { StopRunNow(trial); });
}

void ExperimentService::StopRunNow(const Trial& trial) {
  // A run that listens for the preemption signal has already been told (its poll is answered at
  // the board's next tick): it checkpoints and exits by itself, as Determined's library does,
  // and gets SIGTERM only if it has not after preemption_timeout. A kill is a kill; a run that
  // does not listen gets SIGTERM now (det_harness catches it and stops at its next step).
  const Experiment* experiment = Find(trial.experiment_id);
  const bool killing = trial.exited_early ||
                       (trial.state == experiment::kActive && trial.stopped_for_pause) ||
                       (experiment && experiment->state() == experiment::kStoppingKilled);
  auto run = runs_.find(trial.TaskId());
  const MonoTime now = clock_.Now();
  if (!killing && run != runs_.end() && now < run->second.listening_until) {
    if (!run->second.kill_at) run->second.kill_at = now + launch_.preemption_timeout;
    return;
  }
  KillRun(trial.TaskId(), trial.id);
}

void ExperimentService::ResumeFrom(const std::string& task_id, const std::string& checkpoint,
                                   int64_t steps) {
  auto set = registry_.Call<bus::TaskEnvSetRequest, bus::TaskEnvSetReply>(bus::TaskEnvSetRequest{
      task_id,
      {{"DET_LATEST_CHECKPOINT", checkpoint}, {"DET_STEPS_COMPLETED", std::to_string(steps)}}});
  if (!set.ok()) {
    spdlog::warn("{}: a preempted run would not resume from checkpoint {}: {}", task_id, checkpoint,
                 set.status().message());
  }
}

void ExperimentService::KillRun(const std::string& task_id, int64_t trial_id) {
  if (auto run = runs_.find(task_id); run != runs_.end()) run->second.kill_at.reset();
  auto killed =
      registry_.Call<bus::TaskKillRequest, bus::TaskKillReply>(bus::TaskKillRequest{task_id});
  if (!killed.ok()) {
    spdlog::warn("trial {}: cannot stop its run: {}", trial_id, killed.status().message());
  }
}

void ExperimentService::KillOverdueRuns() {
  const MonoTime now = clock_.Now();
  std::vector<std::pair<std::string, int64_t>> overdue;
  for (const auto& [task_id, run] : runs_) {
    if (run.kill_at && now >= *run.kill_at) overdue.emplace_back(task_id, run.trial_id);
  }
  for (const auto& [task_id, trial_id] : overdue) {
    spdlog::info(
        "trial {}: its run did not exit within preemption_timeout of being told to stop;"
        " sending SIGTERM",
        trial_id);
    KillRun(task_id, trial_id);
  }
}

void ExperimentService::CollectCheckpoints() {
  for (int64_t id : std::exchange(to_collect_, {})) {
    if (const Experiment* experiment = Find(id)) collector_.Collect(*experiment);
  }
  for (const auto& [id, outcome] : collector_.Poll()) {
    if (outcome.ok()) {
      spdlog::info("experiment {} deleted", id);
      experiments_.erase(id);
    } else if (Experiment* experiment = Find(id)) {
      spdlog::warn("experiment {}: delete failed: {}", id, outcome.message());
      experiment->DeleteFailed(outcome.message());
    }
  }
}

void ExperimentService::TrialChanged(const Trial& trial) {
  if (experiment::IsTerminal(trial.state)) to_collect_.insert(trial.experiment_id);
  unsaved_trials_.insert({trial.experiment_id, trial.id});
}

void ExperimentService::ExperimentChanged(const Experiment& experiment) {
  unsaved_experiments_.insert(experiment.id());
}

Status ExperimentService::Commit() {
  while (true) {
    FinishEndedRuns();
    if (unsaved_trials_.empty() && unsaved_experiments_.empty() && after_commit_.empty()) {
      return Status::Ok();
    }
    Status stored = records_.Store(Unsaved());
    if (stored.code() == StatusCode::kUnavailable) {
      // Out of reach: nothing is acted on until it is stored (the next turn tries).
      spdlog::error("experiments: changes not stored yet: {}", stored.message());
      return stored;
    }
    if (!stored.ok()) spdlog::error("experiments: changes not stored: {}", stored.message());
    new_trials_.clear();
    unsaved_trials_.clear();
    unsaved_experiments_.clear();
    continued_.clear();
    for (auto& effect : std::exchange(after_commit_, {})) effect();
  }
}

ExperimentChanges ExperimentService::Unsaved() const {
  ExperimentChanges changes;
  for (const auto& [experiment_id, trial_id] : new_trials_) {
    if (auto row = TrialRowOf(experiment_id, trial_id)) changes.created.push_back(*row);
  }
  for (const auto& [experiment_id, trial_id] : unsaved_trials_) {
    if (auto row = TrialRowOf(experiment_id, trial_id)) changes.updated.push_back(*row);
  }
  for (int64_t id : unsaved_experiments_) {
    if (auto row = ExperimentRowOf(id)) changes.experiments.push_back(*row);
  }
  return changes;
}

std::optional<TrialRow> ExperimentService::TrialRowOf(int64_t experiment_id,
                                                      int64_t trial_id) const {
  auto entry = experiments_.find(experiment_id);
  const Trial* trial =
      entry == experiments_.end() ? nullptr : entry->second.experiment->FindTrial(trial_id);
  if (!trial) return std::nullopt;
  return TrialRow{trial->id,
                  experiment_id,
                  std::to_string(trial->request_id),
                  trial->hparams.dump(),
                  trial->state,
                  trial->restarts,
                  trial->run_id,
                  trial->end_ns ? std::optional<int64_t>(trial->end_ns) : std::nullopt};
}

std::optional<ExperimentRow> ExperimentService::ExperimentRowOf(int64_t id) const {
  auto entry = experiments_.find(id);
  if (entry == experiments_.end()) return std::nullopt;
  const Experiment& experiment = *entry->second.experiment;
  const bool over = experiment::IsTerminal(experiment.state()) &&
                    experiment.state() != experiment::kDeleting &&
                    experiment.state() != experiment::kDeleteFailed;
  ExperimentRow row{id, experiment.state(), over ? std::optional<int64_t>(NowNs()) : std::nullopt,
                    experiment.SaveState().dump()};
  if (continued_.contains(id)) {
    row.continued_config = entry->second.config_yaml;
    row.continued_name = experiment.config().name;
  }
  return row;
}

void ExperimentService::Start() {
  stop_ = false;
  thread_ = std::thread([this] { Run(); });
}

void ExperimentService::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void ExperimentService::Run() {
  NameThisThread("experiments");
  if (Status started = tasks_.Start(); !started.ok()) {
    spdlog::error("experiments: cannot follow task events: {}", started.message());
  }
  for (const std::string& task_id : std::exchange(stop_after_restore_, {})) {
    (void)registry_.Call<bus::TaskKillRequest, bus::TaskKillReply>(bus::TaskKillRequest{task_id});
  }
  while (!stop_) {
    // Task events matter only while runs are live: otherwise (commands churning, no experiment)
    // they wait in the subscription, read once a run starts (a dropped one makes it resync, and
    // a resync asks the registry), so they cost this thread no wakeup each.
    const bool follow = !runs_.empty() || !tasks_.synced() || reconcile_;
    std::vector<zmq::pollitem_t> items = {{server_.socket().handle(), 0, ZMQ_POLLIN, 0}};
    if (follow) {
      for (zmq::socket_t* s : tasks_.sockets()) items.push_back({s->handle(), 0, ZMQ_POLLIN, 0});
    }
    bus::Poll(items.data(), items.size(), std::chrono::milliseconds(100));
    if (items[0].revents & ZMQ_POLLIN) server_.Receive();
    if (follow) FollowTaskEvents();
    KillOverdueRuns();
    const MonoTime now = clock_.Now();
    if (now >= next_collect_) {
      next_collect_ = now + collect_interval_;
      CollectCheckpoints();
    }
    (void)Commit();
  }
}

}  // namespace det::master
