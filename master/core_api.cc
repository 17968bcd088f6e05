#include "master/core_api.h"

#include <httplib.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <regex>

#include "bus/catalog/experiments.h"
#include "bus/rpc_client.h"
#include "bus/socket.h"
#include "common/retry.h"
#include "master/agent_registry.h"
#include "master/cluster_api.h"
#include "master/experiment_service.h"
#include "master/http_json.h"
#include "master/user_http.h"
#include "storage/experiments_repo.h"
#include "storage/telemetry_repo.h"

namespace det::generated {
extern const char kHarnessPy[];
extern const char kOpenApiJson[];
}  // namespace det::generated

namespace det::master {
namespace {

using nlohmann::json;

// Who is calling: an allocation of run `run_id` of trial `trial_id` ("trial-<id>-<run>.<n>").
struct Caller {
  std::string allocation_id;
  int64_t trial_id = 0;
  int32_t run_id = 0;
};

Result<Caller> CallerOf(const std::string& allocation_id) {
  static const std::regex kTrialAllocation(R"(trial-(\d+)-(\d+)\.\d+)");
  std::smatch match;
  if (!std::regex_match(allocation_id, match, kTrialAllocation)) {
    return PermissionDenied("allocation " + allocation_id + " is not a trial's");
  }
  return Caller{allocation_id, std::stoll(match[1]), std::stoi(match[2])};
}

// PermissionDenied when the trial has moved on to a later run than the caller's. A later run in
// the caller's token than the one stored is let through: the master stores a run before it
// starts it, unless the database was away then.
Status RefuseEndedRunIn(pqxx::work& tx, const Caller& caller) {
  DET_ASSIGN_OR_RETURN(storage::TrialRecord trial, storage::GetTrial(tx, caller.trial_id));
  if (caller.run_id < trial.run_id) {
    return PermissionDenied("this token is for run " + std::to_string(caller.run_id) +
                            " of trial " + std::to_string(caller.trial_id) +
                            ", which has ended: the trial is on run " +
                            std::to_string(trial.run_id));
  }
  return Status::Ok();
}

constexpr size_t kHttpWorkers = 256;  // long polls and rendezvous waits hold one each

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

CoreApi::CoreApi(zmq::context_t& context, storage::DbConfig db, AllocationTokens tokens,
                 Options options)
    : context_(context),
      db_(std::move(db), 4),
      tokens_(std::move(tokens)),
      options_(options),
      rendezvous_(options_.distributed.rendezvous_timeout,
                  [&context](const std::string& allocation_id, const std::string& why) {
                    KillTaskOf(context, allocation_id, why);
                  }),
      server_(options_.tls_cert.empty() ? std::make_unique<httplib::Server>()
                                        : std::make_unique<httplib::SSLServer>(
                                              options_.tls_cert.c_str(), options_.tls_key.c_str())),
      routes_(*server_) {
  Route();
}

CoreApi::~CoreApi() { Stop(); }

Result<int> CoreApi::Bind(const std::string& host, int port) {
  if (!server_->is_valid()) {
    return InvalidArgument("security.tls: cannot use the certificate " + options_.tls_cert +
                           " with the key " + options_.tls_key +
                           " (PEM files that belong together?)");
  }
  if (port == 0) {
    const int bound = server_->bind_to_any_port(host);
    if (bound <= 0) return Unavailable("port: cannot listen on " + host);
    return bound;
  }
  // A port still held is tried again for a while, as the bus's ports are (bus::kBindRetryFor).
  if (!RetryEvery(std::chrono::milliseconds(200), bus::kBindRetryFor,
                  [&] { return server_->bind_to_port(host, port); })) {
    return Unavailable("port: cannot listen on " + host + ":" + std::to_string(port));
  }
  return port;
}

void CoreApi::Start() {
  thread_ = std::thread([this] { server_->listen_after_bind(); });
}

void CoreApi::Stop() {
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
}

void CoreApi::ServeWebUi() {
  // Files under the WebUI's folder first (index.html at `/`); anything else falls through to the
  // API's routes. The assets' names carry their hash, so they may be cached for good.
  if (!options_.webui_dir.empty() && server_->set_mount_point("/", options_.webui_dir)) {
    server_->set_file_request_handler([](const httplib::Request& req, httplib::Response& res) {
      if (req.path.starts_with("/assets/")) {
        res.set_header("Cache-Control", "public, max-age=31536000, immutable");
      } else {
        res.set_header("Cache-Control", "no-cache");
      }
    });
    return;
  }
  server_->Get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(
        "<!doctype html><title>det</title><p>The WebUI is not built: run scripts/build.sh (it "
        "needs Node.js), or point master.yaml's <code>webui_dir</code> at its files. The REST API "
        "is at <a href=\"/api/v1/openapi.json\">/api/v1/openapi.json</a>.</p>",
        "text/html; charset=utf-8");
  });
}

void CoreApi::Route() {
  server_->new_task_queue = [] { return new httplib::ThreadPool(kHttpWorkers); };
  // Headers and body go out as separate writes: without this, Nagle and delayed ACKs hold each
  // answer on a kept-alive connection for tens of milliseconds.
  server_->set_tcp_nodelay(true);
  RouteExperimentApi(routes_, *options_.api);
  RouteUserApi(routes_, options_.api->users());
  RouteClusterApi(routes_, *options_.api);
  ServeWebUi();
  // The caller's allocation, checked against the trial the path names (when it names one). A
  // token lapses when its run is over: once the trial has started a later run (a restart, a
  // resume after pause), the earlier run's token is refused, so a run cut off from its agent
  // cannot write into the series its successor writes.
  auto authenticate = [this](const httplib::Request& req, int64_t trial_id) -> Result<Caller> {
    DET_ASSIGN_OR_RETURN(std::string token, BearerToken(req, "DET_SESSION_TOKEN"));
    DET_ASSIGN_OR_RETURN(std::string allocation_id, tokens_.Verify(token));
    DET_ASSIGN_OR_RETURN(Caller caller, CallerOf(allocation_id));
    if (trial_id != 0 && caller.trial_id != trial_id) {
      return PermissionDenied("this token is for trial " + std::to_string(caller.trial_id) +
                              ", not trial " + std::to_string(trial_id));
    }
    DET_RETURN_IF_ERROR(db_.Run([&](pqxx::work& tx) { return RefuseEndedRunIn(tx, caller); }));
    return caller;
  };
  auto tell = [this](const bus::TrialReport& report) -> Result<json> {
    DET_ASSIGN_OR_RETURN(bus::TrialSignal signal,
                         (ExperimentService::Ask<bus::TrialReport, bus::TrialSignal>(
                             context_, report, std::chrono::seconds(10))));
    return json{{"preempt", signal.should_stop}, {"reason", signal.reason}};
  };
  auto trial_of = [](const httplib::Request& req) { return std::stoll(req.matches[1].str()); };

  routes_.Post("/api/v1/trials/{trial_id}/metrics",
               [=, this](const httplib::Request& req, httplib::Response& res) {
                 Reply(res, [&]() -> Result<json> {
                   DET_ASSIGN_OR_RETURN(Caller caller, authenticate(req, trial_of(req)));
                   DET_ASSIGN_OR_RETURN(bus::TrialReport report, MetricsReportOf(req.body));
                   DET_RETURN_IF_ERROR(db_.Run([&](pqxx::work& tx) {
                     storage::RecordMetric(tx, {caller.trial_id, report.kind, report.steps,
                                                caller.run_id, report.metrics_json});
                     return Status::Ok();
                   }));
                   report.allocation_id = caller.allocation_id;
                   return tell(report);
                 }());
               });

  routes_.Post("/api/v1/trials/{trial_id}/checkpoints", [=, this](const httplib::Request& req,
                                                                  httplib::Response& res) {
    Reply(res, [&]() -> Result<json> {
      DET_ASSIGN_OR_RETURN(Caller caller, authenticate(req, trial_of(req)));
      DET_ASSIGN_OR_RETURN(storage::CheckpointRecord checkpoint, CheckpointOf(req.body));
      checkpoint.trial_id = caller.trial_id;
      DET_RETURN_IF_ERROR(
          db_.Run([&](pqxx::work& tx) { return storage::SaveCheckpoint(tx, checkpoint); }));
      bus::TrialReport report{caller.allocation_id, "checkpoint", checkpoint.steps_completed};
      report.checkpoint_uuid = checkpoint.uuid;
      return tell(report);
    }());
  });

  routes_.Post("/api/v1/trials/{trial_id}/early_exit",
               [=](const httplib::Request& req, httplib::Response& res) {
                 Reply(res, [&]() -> Result<json> {
                   DET_ASSIGN_OR_RETURN(Caller caller, authenticate(req, trial_of(req)));
                   DET_ASSIGN_OR_RETURN(bus::TrialReport report, EarlyExitReportOf(req.body));
                   report.allocation_id = caller.allocation_id;
                   return tell(report);
                 }());
               });

  routes_.Post("/api/v1/trials/{trial_id}/progress",
               [=](const httplib::Request& req, httplib::Response& res) {
                 Reply(res, [&]() -> Result<json> {
                   DET_ASSIGN_OR_RETURN(Caller caller, authenticate(req, trial_of(req)));
                   DET_ASSIGN_OR_RETURN(bus::TrialReport report, ProgressReportOf(req.body));
                   report.allocation_id = caller.allocation_id;
                   return tell(report);
                 }());
               });

  routes_.Get("/api/v1/trials/{trial_id}/context",
              [=, this](const httplib::Request& req, httplib::Response& res) {
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
                res.set_content(**archive, "application/gzip");
              });

  // The caller, whose token must be for the allocation the path names.
  auto allocation_caller = [=](const httplib::Request& req) -> Result<Caller> {
    DET_ASSIGN_OR_RETURN(Caller caller, authenticate(req, 0));
    if (caller.allocation_id != req.matches[1].str()) {
      return PermissionDenied("this token is for allocation " + caller.allocation_id);
    }
    return caller;
  };

  routes_.Get(
      "/api/v1/allocations/{allocation_id}/signals/preemption",
      [=](const httplib::Request& req, httplib::Response& res) {
        Reply(res, [&]() -> Result<json> {
          DET_ASSIGN_OR_RETURN(Caller caller, allocation_caller(req));
          int timeout_s = 60;
          if (req.has_param("timeout_seconds")) {
            timeout_s =
                std::clamp(std::atoi(req.get_param_value("timeout_seconds").c_str()), 0, 600);
          }
          const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
          while (true) {
            DET_ASSIGN_OR_RETURN(json signal, tell({caller.allocation_id, "ready"}));
            if (signal["preempt"].get<bool>() || std::chrono::steady_clock::now() >= deadline) {
              return signal;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
          }
        }());
      });

  routes_.Post("/api/v1/allocations/{allocation_id}/ready",
               [=](const httplib::Request& req, httplib::Response& res) {
                 Reply(res, [&]() -> Result<json> {
                   DET_ASSIGN_OR_RETURN(Caller caller, allocation_caller(req));
                   return tell({caller.allocation_id, "ready"});
                 }());
               });

  routes_.Post("/api/v1/allocations/{allocation_id}/rendezvous",
               [=, this](const httplib::Request& req, httplib::Response& res) {
                 Reply(res, [&]() -> Result<json> {
                   DET_ASSIGN_OR_RETURN(Caller caller, allocation_caller(req));
                   DET_ASSIGN_OR_RETURN(RendezvousRequest request, RendezvousRequestOf(req.body));
                   DET_ASSIGN_OR_RETURN(
                       auto all, rendezvous_.Arrive(caller.allocation_id, request.num_containers,
                                                    request.arrival));
                   return RendezvousInfo(all, request.arrival.rank, options_.distributed);
                 }());
               });

  routes_.Get("/api/v1/openapi.json", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(generated::kOpenApiJson, "application/json");
  });
  routes_.Get("/api/v1/harness/det_harness.py",
              [](const httplib::Request&, httplib::Response& res) {
                res.set_content(generated::kHarnessPy, "text/x-python");
              });
}

}  // namespace det::master
