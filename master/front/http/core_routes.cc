#include "master/front/http/core_routes.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "bus/catalog/experiments.h"
#include "common/clock.h"
#include "master/front/http/experiment_routes.h"
#include "master/front/http/experiment_shapes.h"
#include "master/front/http/json.h"
#include "master/front/http/user_routes.h"
#include "master/front/record_reads.h"

// Embedded files (cmake/embed_text.cmake): each in parts, then nullptr.
namespace det::generated {
extern const char* const kHarnessPy[];
extern const char* const kStoragePy[];
extern const char* const kGcsPy[];
extern const char* const kOpenApiJson[];
}  // namespace det::generated

namespace det::master::http {
namespace {

using nlohmann::json;

// Metric and checkpoint reports: a batch of many metrics is larger than most requests.
constexpr size_t kReportBodyLimit = 64 << 20;

json SignalJson(const bus::TrialSignal& signal) {
  return {{"preempt", signal.should_stop}, {"reason", signal.reason}};
}

Result<json> AsJson(const Result<bus::TrialSignal>& signal) {
  if (!signal.ok()) return signal.status();
  return SignalJson(*signal);
}

json RendezvousInfo(const std::vector<RendezvousArrival>& all, int rank,
                    const DistributedTrainingConfig& config) {
  json addresses = json::array();
  json slots = json::array();
  int world_size = 0;
  for (const RendezvousArrival& a : all) {
    addresses.push_back(a.address);
    slots.push_back(a.slots);
    world_size += a.slots;
  }
  return {{"rank", rank},
          {"num_containers", all.size()},
          {"addresses", addresses},
          {"slots", slots},
          {"world_size", world_size},
          {"chief_address", all.front().address},
          {"chief_port", all.front().port},
          {"gloo_port_range", config.gloo_port_range.ToString()},
          {"nccl_port_range", config.nccl_port_range.ToString()}};
}

// A report without stepsCompleted (the library's profiler: groups cpu, gpu, memory, disk,
// network) is a time series: its step is its reportTime in Unix milliseconds, or now's.
int64_t ReportTimeMillis(const json& trial_metrics) {
  std::string text = trial_metrics.value("reportTime", "");
  if (text.ends_with("+00:00")) text = text.substr(0, text.size() - 6) + "Z";  // Python's UTC
  if (std::optional<int64_t> ns = ParseRfc3339Utc(text)) return *ns / 1000000;
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             RealClock::Instance().WallNow().time_since_epoch())
      .count();
}

}  // namespace

// Determined's ReportTrialMetrics body: {"group", "metrics": {"trialId", "trialRunId",
// "stepsCompleted", "reportTime", "metrics": {"avgMetrics": {...}, "batchMetrics": ...}}}.
Result<bus::TrialReport> MetricsReportOf(const std::string& text) {
  DET_ASSIGN_OR_RETURN(json body, ParseJsonObject(text));
  bus::TrialReport report;
  DET_ASSIGN_OR_RETURN(
      report.kind,
      Field<std::string>(body, "group", "\"training\", \"validation\" or a group of your own"));
  // Determined's custom groups (core_context.train.report_metrics(group, ...)): stored under
  // their name; only validations reach the searcher.
  DET_RETURN_IF_ERROR(CheckMetricGroup(report.kind, "group"));
  if (!body.contains("metrics") || !body["metrics"].is_object()) {
    return InvalidArgument(
        "metrics: expected {\"stepsCompleted\", \"metrics\": {\"avgMetrics\": {...}}}");
  }
  const json& trial_metrics = body["metrics"];
  const bool by_time =
      !trial_metrics.contains("stepsCompleted") || trial_metrics["stepsCompleted"].is_null();
  if (by_time && (report.kind == "training" || report.kind == "validation")) {
    return InvalidArgument("metrics.stepsCompleted: is required for " + report.kind + " metrics");
  }
  if (by_time) {
    report.steps = ReportTimeMillis(trial_metrics);
  } else {
    auto steps = Field<int64_t>(trial_metrics, "stepsCompleted", "a whole number");
    if (!steps.ok()) return InvalidArgument("metrics." + steps.status().message());
    report.steps = *steps;
  }
  const json* inner = trial_metrics.contains("metrics") ? &trial_metrics["metrics"] : nullptr;
  if (!inner || !inner->is_object() || !inner->contains("avgMetrics") ||
      !(*inner)["avgMetrics"].is_object()) {
    return InvalidArgument(
        "metrics.metrics.avgMetrics: expected a JSON object of metric names to values");
  }
  report.metrics_json = (*inner)["avgMetrics"].dump();
  return report;
}

// Determined's ReportCheckpoint body (v1Checkpoint): {"uuid", "metadata": {"steps_completed"},
// "resources": {path: size}, "allocationId", "taskId", "state", "reportTime", "storageId"}.
Result<storage::CheckpointRecord> CheckpointOf(const std::string& text) {
  DET_ASSIGN_OR_RETURN(json body, ParseJsonObject(text));
  storage::CheckpointRecord checkpoint;
  DET_ASSIGN_OR_RETURN(checkpoint.uuid, Field<std::string>(body, "uuid", "a UUID"));
  const json metadata = body.value("metadata", json::object());
  if (!metadata.is_object()) return InvalidArgument("metadata: expected a JSON object");
  DET_ASSIGN_OR_RETURN(checkpoint.steps_completed,
                       Field<int64_t>(metadata, "steps_completed", "a whole number"));
  checkpoint.state = "COMPLETED";
  json resources = body.value("resources", json::object());
  if (!resources.is_object()) return InvalidArgument("resources: expected {path: size in bytes}");
  // Determined's library sends each size as its decimal text (an int64 in its protobuf JSON).
  for (auto& [path, size] : resources.items()) DecimalTextToNumber(size);
  checkpoint.resources_json = resources.dump();
  checkpoint.metadata_json = metadata.dump();
  return checkpoint;
}

// Determined's ReportTrialExitedEarly body: {"reason": "EXITED_REASON_ERRORED" |
// "EXITED_REASON_INVALID_HP" | "EXITED_REASON_INIT_INVALID_HP" |
// "EXITED_REASON_USER_REQUESTED_STOP"}.
Result<std::string> CheckpointMetadataOf(const std::string& body) {
  DET_ASSIGN_OR_RETURN(json fields, ParseJsonObject(body));
  if (!fields.contains("checkpoint") || !fields["checkpoint"].is_object()) {
    return InvalidArgument("checkpoint: is required (an object with metadata)");
  }
  const json& checkpoint = fields["checkpoint"];
  if (!checkpoint.contains("metadata") || !checkpoint["metadata"].is_object()) {
    return InvalidArgument("checkpoint.metadata: is required (a JSON object)");
  }
  std::string text = checkpoint["metadata"].dump();
  if (text.size() > kCheckpointMetadataLimit) {
    return InvalidArgument("checkpoint.metadata: " + std::to_string(text.size()) +
                           " bytes, more than " + std::to_string(kCheckpointMetadataLimit));
  }
  return text;
}

Result<bus::TrialReport> EarlyExitReportOf(const std::string& text) {
  DET_ASSIGN_OR_RETURN(json body, ParseJsonObject(text));
  bus::TrialReport report{"", "exit"};
  DET_ASSIGN_OR_RETURN(std::string reason,
                       Field<std::string>(body, "reason",
                                          "EXITED_REASON_ERRORED, EXITED_REASON_INVALID_HP or "
                                          "EXITED_REASON_USER_REQUESTED_STOP"));
  static const std::map<std::string, std::string, std::less<>> kReasons = {
      {"EXITED_REASON_ERRORED", "ERRORED"},
      {"EXITED_REASON_INVALID_HP", "INVALID_HP"},
      {"EXITED_REASON_INIT_INVALID_HP", "INVALID_HP"},
      {"EXITED_REASON_USER_REQUESTED_STOP", "USER_CANCELED"}};
  const auto known = kReasons.find(reason);
  if (known == kReasons.end()) {
    return InvalidArgument(
        "reason: expected EXITED_REASON_ERRORED, EXITED_REASON_INVALID_HP, "
        "EXITED_REASON_INIT_INVALID_HP or EXITED_REASON_USER_REQUESTED_STOP, "
        "not " +
        reason);
  }
  report.reason = known->second;
  return report;
}

Result<bus::TrialReport> ProgressReportOf(const std::string& text) {
  DET_ASSIGN_OR_RETURN(json body, ParseJsonObject(text));
  bus::TrialReport report{"", "progress"};
  DET_ASSIGN_OR_RETURN(report.progress, Field<double>(body, "progress", "a number in 0..1"));
  return report;
}

Result<RendezvousRequest> RendezvousRequestOf(const std::string& text) {
  DET_ASSIGN_OR_RETURN(json body, ParseJsonObject(text));
  RendezvousRequest request;
  DET_ASSIGN_OR_RETURN(request.arrival.rank, Field<int>(body, "rank", "DET_CONTAINER_RANK"));
  DET_ASSIGN_OR_RETURN(request.num_containers,
                       Field<int>(body, "num_containers", "DET_NUM_CONTAINERS"));
  DET_ASSIGN_OR_RETURN(request.arrival.address,
                       Field<std::string>(body, "address", "the container's IP address"));
  if (body.contains("port")) {
    DET_ASSIGN_OR_RETURN(request.arrival.port, Field<int>(body, "port", "the chief's port"));
  }
  if (body.contains("slots")) {
    DET_ASSIGN_OR_RETURN(request.arrival.slots,
                         Field<int>(body, "slots", "the container's slot count"));
  }
  if (body.contains("phase")) {
    DET_ASSIGN_OR_RETURN(request.phase, Field<std::string>(body, "phase", "\"launch\" or \"\""));
    if (!request.phase.empty() && request.phase != "launch") {
      return InvalidArgument("phase: expected \"launch\" or \"\", not " + request.phase);
    }
  }
  return request;
}

TrialRoutes::TrialRoutes(zmq::context_t& context, storage::DbConfig db, AllocationTokens tokens,
                         DistributedTrainingConfig distributed, FrontDoor& front)
    : front_(front),
      reports_(context, std::move(db), std::move(tokens)),
      distributed_(distributed),
      rendezvous_(distributed_.rendezvous_timeout,
                  [this](const std::string& meeting, const std::string& why) {
                    // A meeting's key is its allocation's id, "#phase" after it for the launcher's.
                    reports_.KillAllocation(meeting.substr(0, meeting.find('#')), why);
                  }),
      board_(context) {}

TrialRoutes::~TrialRoutes() = default;

void TrialRoutes::Tick() {
  const MonoTime now = front_.clock.Now();
  rendezvous_.Tick(now);
  board_.Tick(now);
}

void TrialRoutes::Route(Router& router) {
  RouteReports(router);
  RouteAllocations(router);
  RouteRunBookkeeping(router);
  RouteCheckpointDownload(router);
  // An embedded file's parts joined.
  auto joined = [](const char* const* parts) {
    std::string text;
    for (; *parts != nullptr; ++parts) text += *parts;
    return text;
  };
  router.Get("/api/v1/openapi.json",
             [document = joined(generated::kOpenApiJson)](const Request&, Response& res) {
               res.SetContent(document, "application/json");
             });
  const std::pair<const char*, const char* const*> modules[] = {
      {"det_harness.py", generated::kHarnessPy},
      {"det_storage.py", generated::kStoragePy},
      {"det_gcs.py", generated::kGcsPy}};
  for (const auto& module : modules) {
    const std::string source = joined(module.second);
    router.Get(
        std::string("/api/v1/harness/") + module.first,
        [source](const Request&, Response& res) { res.SetContent(source, "text/x-python"); });
  }
}

Result<TrialRun> TrialRoutes::Caller(const Request& req, int64_t trial_id) {
  DET_ASSIGN_OR_RETURN(std::string token, AllocationToken(req));
  return reports_.Authenticate(token, trial_id);
}

Result<nlohmann::ordered_json> TrialRoutes::CheckpointFor(const Request& req,
                                                          const std::string& uuid) {
  Result<TrialRun> run = Caller(req, 0);
  if (run.ok()) {
    DET_ASSIGN_OR_RETURN(auto found, reports_.Checkpoint(*run, uuid));
    const auto& [checkpoint, experiment_id] = found;
    nlohmann::ordered_json json = CheckpointJson(CheckpointSummaryOf(checkpoint, experiment_id));
    return nlohmann::ordered_json{{"checkpoint", std::move(json)}};
  }
  // Not a run's token: a user's (a run's token that failed is refused as it was).
  if (run.status().code() != StatusCode::kUnauthenticated ||
      !req.Header("Grpc-Metadata-x-allocation-token").empty()) {
    return run.status();
  }
  DET_ASSIGN_OR_RETURN(auth::Principal user, UserOf(front_.calls.users(), req));
  Result<nlohmann::ordered_json> checkpoint = UserCheckpoint(user, uuid);
  if (checkpoint.status().code() == StatusCode::kNotFound) {
    // Its experiment is gone; a model version may keep it.
    DET_ASSIGN_OR_RETURN(auto registered, front_.models.Registered(uuid));
    if (registered) {
      auto kept = nlohmann::ordered_json::parse(registered->checkpoint_json, nullptr, false);
      checkpoint = kept.is_discarded()
                       ? Result<nlohmann::ordered_json>(Internal(
                             "the model version's copy of checkpoint " + uuid + " is not JSON"))
                       : Result<nlohmann::ordered_json>(std::move(kept));
    }
  }
  DET_RETURN_IF_ERROR(checkpoint.status());
  return nlohmann::ordered_json{{"checkpoint", std::move(*checkpoint)}};
}

Result<nlohmann::ordered_json> TrialRoutes::UserCheckpoint(const auth::Principal& user,
                                                           const std::string& uuid) {
  DET_ASSIGN_OR_RETURN(auto found, reports_.AnyCheckpoint(uuid));
  const auto& [checkpoint, experiment_id] = found;
  DET_ASSIGN_OR_RETURN(auto experiment,
                       front_.calls.Call(user, bus::ExperimentGetRequest{experiment_id}));
  DET_ASSIGN_OR_RETURN(std::vector<nlohmann::ordered_json> detailed,
                       DetailedCheckpoints(front_, user, experiment,
                                           {CheckpointSummaryOf(checkpoint, experiment_id)}));
  return std::move(detailed.front());
}

Result<storage::RegisteredCheckpoint> TrialRoutes::CheckpointToRegister(const auth::Principal& user,
                                                                        const std::string& uuid) {
  DET_ASSIGN_OR_RETURN(auto found, reports_.AnyCheckpoint(uuid));
  const auto& [checkpoint, experiment_id] = found;
  if (checkpoint.state != "COMPLETED") {
    return FailedPrecondition("checkpoint " + uuid + " is " + checkpoint.state +
                              ": only a COMPLETED checkpoint can be registered");
  }
  DET_ASSIGN_OR_RETURN(nlohmann::ordered_json shown, UserCheckpoint(user, uuid));
  DET_ASSIGN_OR_RETURN(std::string config, reports_.StoredConfig(experiment_id));
  return storage::RegisteredCheckpoint{shown.dump(),
                                       nlohmann::json{{"config", std::move(config)}}.dump()};
}

void TrialRoutes::RouteReports(Router& router) {
  auto trial_of = [](const Request& req) { return std::stoll(req.Match(1)); };
  router.Post("/api/v1/trials/{trial_id}/metrics",
              [=, this](const Request& req, Response& res) {
                Reply(res, [&]() -> Result<json> {
                  DET_ASSIGN_OR_RETURN(TrialRun run, Caller(req, trial_of(req)));
                  DET_ASSIGN_OR_RETURN(bus::TrialReport report, MetricsReportOf(req.body));
                  return AsJson(reports_.ReportMetrics(run, std::move(report)));
                }());
              },
              {.body_limit = kReportBodyLimit});
  // Determined's StartTrial: the run says it began (its checkpoint storage as it sees it).
  router.Post("/api/v1/runs/start", [=, this](const Request& req, Response& res) {
    Reply(res, [&]() -> Result<json> {
      DET_ASSIGN_OR_RETURN(TrialRun run, Caller(req, 0));  // who asks first, then what
      DET_ASSIGN_OR_RETURN(json body, ParseJsonObject(req.body));
      DET_ASSIGN_OR_RETURN(int64_t trial_id, Field<int64_t>(body, "runId", "the trial's id"));
      if (trial_id != run.trial_id) {
        return PermissionDenied("this token is for trial " + std::to_string(run.trial_id) +
                                ", not trial " + std::to_string(trial_id));
      }
      return json::object();
    }());
  });
  // Determined's GetCheckpoint: as core_context.checkpoint.get_metadata() reads it (a run: one of
  // its experiment's checkpoints, sizes as decimal text, protobuf's int64 in JSON), and as its
  // SDK and `det checkpoint describe` read it (a user: any checkpoint, with its trial's hparams,
  // validation and the experiment's config).
  router.Get("/api/v1/checkpoints/{checkpoint_uuid}", [=, this](const Request& req, Response& res) {
    Reply(res, CheckpointFor(req, req.Match(1)));
  });
  // Determined's PostCheckpointMetadata: {"checkpoint": {"metadata": {...}}} replaces the
  // checkpoint's metadata whole (its SDK's add_metadata and remove_metadata send the result); by
  // a run for its experiment's checkpoints, or by a user.
  router.Post("/api/v1/checkpoints/{checkpoint_uuid}/metadata", [=, this](const Request& req,
                                                                          Response& res) {
    Reply(res, [&]() -> Result<nlohmann::ordered_json> {
      DET_RETURN_IF_ERROR(CheckpointFor(req, req.Match(1)).status());  // may it
      DET_ASSIGN_OR_RETURN(std::string metadata, CheckpointMetadataOf(req.body));
      DET_RETURN_IF_ERROR(reports_.SetCheckpointMetadata(req.Match(1), metadata).status());
      return CheckpointFor(req, req.Match(1));
    }());
  });
  // The run is the token's: Determined's body names its allocation and task, not its trial.
  router.Post("/api/v1/checkpoints",
              [=, this](const Request& req, Response& res) {
                Reply(res, [&]() -> Result<json> {
                  DET_ASSIGN_OR_RETURN(TrialRun run, Caller(req, 0));
                  DET_ASSIGN_OR_RETURN(storage::CheckpointRecord checkpoint,
                                       CheckpointOf(req.body));
                  return AsJson(reports_.ReportCheckpoint(run, std::move(checkpoint)));
                }());
              },
              {.body_limit = kReportBodyLimit});
  router.Post("/api/v1/trials/{trial_id}/early_exit", [=, this](const Request& req, Response& res) {
    Reply(res, [&]() -> Result<json> {
      DET_ASSIGN_OR_RETURN(TrialRun run, Caller(req, trial_of(req)));
      DET_ASSIGN_OR_RETURN(bus::TrialReport report, EarlyExitReportOf(req.body));
      return AsJson(reports_.Tell(run, std::move(report)));
    }());
  });
  router.Post("/api/v1/trials/{trial_id}/progress", [=, this](const Request& req, Response& res) {
    Reply(res, [&]() -> Result<json> {
      DET_ASSIGN_OR_RETURN(TrialRun run, Caller(req, trial_of(req)));
      DET_ASSIGN_OR_RETURN(bus::TrialReport report, ProgressReportOf(req.body));
      return AsJson(reports_.Tell(run, std::move(report)));
    }());
  });
  router.Get("/api/v1/trials/{trial_id}/context", [=, this](const Request& req, Response& res) {
    auto archive = [&]() -> Result<std::string> {
      DET_ASSIGN_OR_RETURN(TrialRun run, Caller(req, trial_of(req)));
      return reports_.ModelDefinition(run);
    }();
    if (!archive.ok()) return Reply(res, archive.status());
    res.SetContent(std::move(*archive), "application/gzip");
  });
}

void TrialRoutes::RouteAllocations(Router& router) {
  // The caller, whose token must be for the allocation the path names.
  auto allocation_caller = [this](const Request& req) -> Result<TrialRun> {
    DET_ASSIGN_OR_RETURN(TrialRun run, Caller(req, 0));
    if (run.allocation_id != req.Match(1)) {
      return PermissionDenied("this token is for allocation " + run.allocation_id);
    }
    return run;
  };

  // Parked on the board, which asks the experiment service about every waiting run in one call
  // per tick (50 ms): a run already told to stop is answered at the next tick. A poll of timeout 0
  // is answered at once.
  router.ParkedGet(
      "/api/v1/allocations/{allocation_id}/signals/preemption",
      [=, this](const Request& req, Completion complete) {
        auto caller = allocation_caller(req);
        if (!caller.ok()) return complete(JsonResponse(caller.status()));
        int timeout_s = 60;
        if (req.HasParam("timeout_seconds")) {
          timeout_s = std::clamp(std::atoi(req.Param("timeout_seconds").c_str()), 0, 600);
        }
        if (timeout_s == 0) {
          return complete(JsonResponse(AsJson(reports_.Tell(*caller, {"", "ready"}))));
        }
        board_.Park(caller->allocation_id, front_.clock.Now() + std::chrono::seconds(timeout_s),
                    [complete](Result<bus::TrialSignal> signal) {
                      complete(JsonResponse(AsJson(signal)));
                    });
      });

  // After should_preempt() said yes: the run will checkpoint and exit (a pause, not its end;
  // the experiment already knows why it asked).
  router.Post("/api/v1/allocations/{allocation_id}/signals/ack_preemption",
              [=](const Request& req, Response& res) {
                Reply(res, [&]() -> Result<json> {
                  DET_ASSIGN_OR_RETURN(TrialRun run, allocation_caller(req));
                  (void)run;
                  return json::object();
                }());
              });

  router.Post("/api/v1/allocations/{allocation_id}/ready",
              [=, this](const Request& req, Response& res) {
                Reply(res, [&]() -> Result<json> {
                  DET_ASSIGN_OR_RETURN(TrialRun run, allocation_caller(req));
                  return AsJson(reports_.Tell(run, {"", "ready"}));
                }());
              });

  router.ParkedPost("/api/v1/allocations/{allocation_id}/rendezvous", [=, this](
                                                                          const Request& req,
                                                                          Completion complete) {
    auto caller = allocation_caller(req);
    if (!caller.ok()) return complete(JsonResponse(caller.status()));
    auto request = RendezvousRequestOf(req.body);
    if (!request.ok()) return complete(JsonResponse(request.status()));
    const int rank = request->arrival.rank;
    // The rendezvous fails (and kills) the allocation by this key's prefix.
    rendezvous_.Arrive(caller->allocation_id + (request->phase.empty() ? "" : "#" + request->phase),
                       request->num_containers, std::move(request->arrival), front_.clock.Now(),
                       [complete, rank, this](Result<std::vector<RendezvousArrival>> all) {
                         if (!all.ok()) return complete(JsonResponse(all.status()));
                         complete(JsonResponse(RendezvousInfo(*all, rank, distributed_)));
                       });
  });
}

}  // namespace det::master::http
