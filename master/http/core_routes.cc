#include "master/http/core_routes.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <regex>

#include "bus/catalog/experiments.h"
#include "bus/rpc_client.h"
#include "bus/socket.h"
#include "common/retry.h"
#include "master/agent_registry.h"
#include "master/experiment_service.h"
#include "master/http/cluster_routes.h"
#include "master/http/json.h"
#include "master/http/user_routes.h"
#include "storage/experiments_repo.h"
#include "storage/telemetry_repo.h"

namespace det::generated {
extern const char kHarnessPy[];
extern const char kOpenApiJson[];
}  // namespace det::generated

namespace det::master::http {
namespace {

using nlohmann::json;

// Who is calling: an allocation of run `run_id` of trial `trial_id` ("trial-<id>-<run>.<n>").
struct TrialCaller {
  std::string allocation_id;
  int64_t trial_id = 0;
  int32_t run_id = 0;
};

Result<TrialCaller> CallerOf(const std::string& allocation_id) {
  static const std::regex kTrialAllocation(R"(trial-(\d+)-(\d+)\.\d+)");
  std::smatch match;
  if (!std::regex_match(allocation_id, match, kTrialAllocation)) {
    return PermissionDenied("allocation " + allocation_id + " is not a trial's");
  }
  return TrialCaller{allocation_id, std::stoll(match[1]), std::stoi(match[2])};
}

// PermissionDenied when the trial has moved on to a later run than the caller's. A later run in
// the caller's token than the one stored is let through: the master stores a run before it
// starts it, unless the database was away then.
Status RefuseEndedRunIn(pqxx::work& tx, const TrialCaller& caller) {
  DET_ASSIGN_OR_RETURN(storage::TrialRecord trial, storage::GetTrial(tx, caller.trial_id));
  if (caller.run_id < trial.run_id) {
    return PermissionDenied("this token is for run " + std::to_string(caller.run_id) +
                            " of trial " + std::to_string(caller.trial_id) +
                            ", which has ended: the trial is on run " +
                            std::to_string(trial.run_id));
  }
  return Status::Ok();
}

// Metric and checkpoint reports: a batch of many metrics is larger than most requests.
constexpr size_t kReportBodyLimit = 64 << 20;

// The caller's allocation, checked against the trial the path names (when it names one). A token
// lapses when its run is over: once the trial has started a later run (a restart, a resume after
// pause), the earlier run's token is refused, so a run cut off from its agent cannot write into
// the series its successor writes.
Result<TrialCaller> Authenticate(storage::Database& db, const AllocationTokens& tokens,
                                 const Request& req, int64_t trial_id) {
  DET_ASSIGN_OR_RETURN(std::string token, BearerToken(req, "DET_SESSION_TOKEN"));
  DET_ASSIGN_OR_RETURN(std::string allocation_id, tokens.Verify(token));
  DET_ASSIGN_OR_RETURN(TrialCaller caller, CallerOf(allocation_id));
  if (trial_id != 0 && caller.trial_id != trial_id) {
    return PermissionDenied("this token is for trial " + std::to_string(caller.trial_id) +
                            ", not trial " + std::to_string(trial_id));
  }
  DET_RETURN_IF_ERROR(db.Run([&](pqxx::work& tx) { return RefuseEndedRunIn(tx, caller); }));
  return caller;
}

// Tells the experiment service; its answer is whether the run should stop.
Result<json> Tell(zmq::context_t& context, const bus::TrialReport& report) {
  DET_ASSIGN_OR_RETURN(bus::TrialSignal signal,
                       (ExperimentService::Ask<bus::TrialReport, bus::TrialSignal>(
                           context, report, std::chrono::seconds(10))));
  return json{{"preempt", signal.should_stop}, {"reason", signal.reason}};
}

// Ends the allocation's task: its run failed (the trial counts a restart and runs again).
void KillTaskOf(zmq::context_t& context, const std::string& allocation_id, const std::string& why) {
  spdlog::warn("{}: killing its task", why);
  bus::RpcClient registry(context, AgentRegistry::kQueryEndpoint, {},
                          {.timeout = std::chrono::seconds(5), .attempts = 2});
  auto killed = registry.Call<bus::TaskKillRequest, bus::TaskKillReply>(
      {allocation_id.substr(0, allocation_id.rfind('.'))});
  if (!killed.ok()) spdlog::warn("{}: not killed: {}", allocation_id, killed.status().message());
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

}  // namespace

Result<bus::TrialReport> MetricsReportOf(const std::string& text) {
  DET_ASSIGN_OR_RETURN(json body, ParseJsonObject(text));
  bus::TrialReport report;
  DET_ASSIGN_OR_RETURN(report.kind,
                       Field<std::string>(body, "group", "\"training\" or \"validation\""));
  if (report.kind != "training" && report.kind != "validation") {
    return InvalidArgument("group: expected \"training\" or \"validation\", not " + report.kind);
  }
  DET_ASSIGN_OR_RETURN(report.steps, Field<int64_t>(body, "steps_completed", "a whole number"));
  if (!body.contains("metrics") || !body["metrics"].is_object()) {
    return InvalidArgument("metrics: expected a JSON object of metric names to values");
  }
  report.metrics_json = body["metrics"].dump();
  return report;
}

Result<storage::CheckpointRecord> CheckpointOf(const std::string& text) {
  DET_ASSIGN_OR_RETURN(json body, ParseJsonObject(text));
  storage::CheckpointRecord checkpoint;
  DET_ASSIGN_OR_RETURN(checkpoint.uuid, Field<std::string>(body, "uuid", "a UUID"));
  DET_ASSIGN_OR_RETURN(checkpoint.steps_completed,
                       Field<int64_t>(body, "steps_completed", "a whole number"));
  checkpoint.state = "COMPLETED";
  checkpoint.resources_json = body.value("resources", json::object()).dump();
  checkpoint.metadata_json = body.value("metadata", json::object()).dump();
  return checkpoint;
}

Result<bus::TrialReport> EarlyExitReportOf(const std::string& text) {
  DET_ASSIGN_OR_RETURN(json body, ParseJsonObject(text));
  bus::TrialReport report{"", "exit"};
  DET_ASSIGN_OR_RETURN(report.reason,
                       Field<std::string>(body, "reason", "ERRORED, INVALID_HP or USER_CANCELED"));
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
  return request;
}

TrialRoutes::TrialRoutes(zmq::context_t& context, storage::DbConfig db, AllocationTokens tokens,
                         DistributedTrainingConfig distributed)
    : context_(context),
      db_(std::move(db), 4),
      tokens_(std::move(tokens)),
      distributed_(distributed),
      rendezvous_(distributed_.rendezvous_timeout,
                  [&context](const std::string& allocation_id, const std::string& why) {
                    KillTaskOf(context, allocation_id, why);
                  }),
      board_(context) {}

TrialRoutes::~TrialRoutes() = default;

void TrialRoutes::Tick() {
  const auto now = std::chrono::steady_clock::now();
  rendezvous_.Tick(now);
  board_.Tick(now);
}

void TrialRoutes::Route(Router& router) {
  RouteReports(router);
  RouteAllocations(router);
  router.Get("/api/v1/openapi.json", [](const Request&, Response& res) {
    res.SetContent(generated::kOpenApiJson, "application/json");
  });
  router.Get("/api/v1/harness/det_harness.py", [](const Request&, Response& res) {
    res.SetContent(generated::kHarnessPy, "text/x-python");
  });
}

void TrialRoutes::RouteReports(Router& router) {
  auto authenticate = [this](const Request& req, int64_t trial_id) {
    return Authenticate(db_, tokens_, req, trial_id);
  };
  auto tell = [this](const bus::TrialReport& report) { return Tell(context_, report); };
  auto trial_of = [](const Request& req) { return std::stoll(req.Match(1)); };

  router.Post("/api/v1/trials/{trial_id}/metrics",
              [=, this](const Request& req, Response& res) {
                Reply(res, [&]() -> Result<json> {
                  DET_ASSIGN_OR_RETURN(TrialCaller caller, authenticate(req, trial_of(req)));
                  DET_ASSIGN_OR_RETURN(bus::TrialReport report, MetricsReportOf(req.body));
                  DET_RETURN_IF_ERROR(db_.Run([&](pqxx::work& tx) {
                    storage::RecordMetric(tx, {caller.trial_id, report.kind, report.steps,
                                               caller.run_id, report.metrics_json});
                    return Status::Ok();
                  }));
                  report.allocation_id = caller.allocation_id;
                  return tell(report);
                }());
              },
              {.body_limit = kReportBodyLimit});

  router.Post(
      "/api/v1/trials/{trial_id}/checkpoints",
      [=, this](const Request& req, Response& res) {
        Reply(res, [&]() -> Result<json> {
          DET_ASSIGN_OR_RETURN(TrialCaller caller, authenticate(req, trial_of(req)));
          DET_ASSIGN_OR_RETURN(storage::CheckpointRecord checkpoint, CheckpointOf(req.body));
          checkpoint.trial_id = caller.trial_id;
          DET_RETURN_IF_ERROR(
              db_.Run([&](pqxx::work& tx) { return storage::SaveCheckpoint(tx, checkpoint); }));
          bus::TrialReport report{caller.allocation_id, "checkpoint", checkpoint.steps_completed};
          report.checkpoint_uuid = checkpoint.uuid;
          return tell(report);
        }());
      },
      {.body_limit = kReportBodyLimit});

  router.Post("/api/v1/trials/{trial_id}/early_exit", [=](const Request& req, Response& res) {
    Reply(res, [&]() -> Result<json> {
      DET_ASSIGN_OR_RETURN(TrialCaller caller, authenticate(req, trial_of(req)));
      DET_ASSIGN_OR_RETURN(bus::TrialReport report, EarlyExitReportOf(req.body));
      report.allocation_id = caller.allocation_id;
      return tell(report);
    }());
  });

  router.Post("/api/v1/trials/{trial_id}/progress", [=](const Request& req, Response& res) {
    Reply(res, [&]() -> Result<json> {
      DET_ASSIGN_OR_RETURN(TrialCaller caller, authenticate(req, trial_of(req)));
      DET_ASSIGN_OR_RETURN(bus::TrialReport report, ProgressReportOf(req.body));
      report.allocation_id = caller.allocation_id;
      return tell(report);
    }());
  });

  router.Get("/api/v1/trials/{trial_id}/context", [=, this](const Request& req, Response& res) {
    auto caller = authenticate(req, trial_of(req));
    if (!caller.ok()) return Reply(res, caller.status());
    Result<std::optional<std::string>> archive =
        NotFound("trial " + std::to_string(caller->trial_id) + " not found");
    (void)db_.Run([&](pqxx::work& tx) {
      auto trial = storage::GetTrial(tx, caller->trial_id);
      if (trial.ok()) archive = storage::GetModelDefinition(tx, trial->experiment_id);
      return Status::Ok();
    });
    if (!archive.ok()) return Reply(res, archive.status());
    if (!archive->has_value() || (*archive)->empty()) {
      return Reply(res, NotFound("the experiment has no model definition"));
    }
    res.SetContent(**archive, "application/gzip");
  });
}

void TrialRoutes::RouteAllocations(Router& router) {
  // The caller, whose token must be for the allocation the path names.
  auto allocation_caller = [this](const Request& req) -> Result<TrialCaller> {
    DET_ASSIGN_OR_RETURN(TrialCaller caller, Authenticate(db_, tokens_, req, 0));
    if (caller.allocation_id != req.Match(1)) {
      return PermissionDenied("this token is for allocation " + caller.allocation_id);
    }
    return caller;
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
        if (timeout_s == 0)
          return complete(JsonResponse(Tell(context_, {caller->allocation_id, "ready"})));
        board_.Park(caller->allocation_id,
                    std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s),
                    [complete](Result<bus::TrialSignal> signal) {
                      if (!signal.ok()) return complete(JsonResponse(signal.status()));
                      complete(JsonResponse(
                          json{{"preempt", signal->should_stop}, {"reason", signal->reason}}));
                    });
      });

  router.Post("/api/v1/allocations/{allocation_id}/ready",
              [=, this](const Request& req, Response& res) {
                Reply(res, [&]() -> Result<json> {
                  DET_ASSIGN_OR_RETURN(TrialCaller caller, allocation_caller(req));
                  return Tell(context_, {caller.allocation_id, "ready"});
                }());
              });

  router.ParkedPost("/api/v1/allocations/{allocation_id}/rendezvous",
                    [=, this](const Request& req, Completion complete) {
                      auto caller = allocation_caller(req);
                      if (!caller.ok()) return complete(JsonResponse(caller.status()));
                      auto request = RendezvousRequestOf(req.body);
                      if (!request.ok()) return complete(JsonResponse(request.status()));
                      const int rank = request->arrival.rank;
                      rendezvous_.Arrive(
                          caller->allocation_id, request->num_containers,
                          std::move(request->arrival), std::chrono::steady_clock::now(),
                          [complete, rank, this](Result<std::vector<RendezvousArrival>> all) {
                            if (!all.ok()) return complete(JsonResponse(all.status()));
                            complete(JsonResponse(RendezvousInfo(*all, rank, distributed_)));
                          });
                    });
}

}  // namespace det::master::http
