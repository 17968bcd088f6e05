#pragma once

#include <array>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <type_traits>
#include <vector>
#include <zmq.hpp>

#include "bus/catalog/autoscaler.h"
#include "bus/catalog/experiments.h"
#include "bus/catalog/jobs.h"
#include "bus/catalog/master.h"
#include "bus/catalog/tasks.h"
#include "bus/catalog/users.h"
#include "bus/rpc_client.h"
#include "master/auth/users.h"
#include "master/log_buffer.h"
#include "master/log_retention.h"
#include "master/prometheus.h"
#include "master/resource_config.h"
#include "storage/database.h"
#include "storage/metric_series.h"

namespace det::master {

// Who may call a method.
enum class Access { kUser, kAdmin };

// Which component answers a forwarded method, over its inproc endpoint.
enum class Owner { kRegistry, kExperiments };

// The methods the registry and the experiment service answer: their reply, owner and who may
// call them.
template <class Rep, Owner kOwnedBy, Access kAllowed>
struct Route {
  using Reply = Rep;
  static constexpr Owner kOwner = kOwnedBy;
  static constexpr Access kAccess = kAllowed;
};
template <class Req>
struct Forwarded;
template <>
struct Forwarded<bus::AgentListRequest> : Route<bus::AgentList, Owner::kRegistry, Access::kUser> {};
template <>
struct Forwarded<bus::AgentEnableRequest>
    : Route<bus::AgentReply, Owner::kRegistry, Access::kAdmin> {};
template <>
struct Forwarded<bus::SlotEnableRequest>
    : Route<bus::AgentReply, Owner::kRegistry, Access::kAdmin> {};
template <>
struct Forwarded<bus::CommandRunRequest>
    : Route<bus::CommandRunReply, Owner::kRegistry, Access::kUser> {};
template <>
struct Forwarded<bus::TaskListRequest> : Route<bus::TaskList, Owner::kRegistry, Access::kUser> {};
template <>
struct Forwarded<bus::TaskGetRequest> : Route<bus::TaskGetReply, Owner::kRegistry, Access::kUser> {
};
template <>
struct Forwarded<bus::TaskKillRequest>
    : Route<bus::TaskKillReply, Owner::kRegistry, Access::kUser> {};
template <>
struct Forwarded<bus::JobListRequest> : Route<bus::JobList, Owner::kRegistry, Access::kUser> {};
template <>
struct Forwarded<bus::JobUpdateRequest>
    : Route<bus::JobUpdateReply, Owner::kRegistry, Access::kUser> {};
template <>
struct Forwarded<bus::ExperimentCreateRequest>
    : Route<bus::ExperimentCreateReply, Owner::kExperiments, Access::kUser> {};
template <>
struct Forwarded<bus::ExperimentListRequest>
    : Route<bus::ExperimentList, Owner::kExperiments, Access::kUser> {};
template <>
struct Forwarded<bus::ExperimentGetRequest>
    : Route<bus::ExperimentGetReply, Owner::kExperiments, Access::kUser> {};
template <>
struct Forwarded<bus::ExperimentActionRequest>
    : Route<bus::ExperimentActionReply, Owner::kExperiments, Access::kUser> {};
template <>
struct Forwarded<bus::RegistryStatsRequest>
    : Route<bus::RegistryStats, Owner::kRegistry, Access::kUser> {};
template <>
struct Forwarded<bus::TrialKillRequest>
    : Route<bus::TrialGetReply, Owner::kExperiments, Access::kUser> {};
template <>
struct Forwarded<bus::TrialGetRequest>
    : Route<bus::TrialGetReply, Owner::kExperiments, Access::kUser> {};

// The master's typed api: every method a person or script may call, who may call it, and who
// answers it. The CLI gateway (REQ/REP) and the REST API only translate their transport to it:
// both authenticate the caller's token here and then Call() the same typed method.
//
// Agent, task and job methods go to the agent registry, experiment and trial methods to the
// experiment service (each over inproc, on a socket of this call's own); user and token methods,
// task logs and master.info are answered here.
//
// Thread-safe: any thread may call; each call blocks until its answer (PostgreSQL, or the owner's
// reply: up to 30 s; the registry's changes of tasks are answered once stored).
class Api {
 public:
  // `database`, `users` and `context` outlive the api.
  Api(zmq::context_t& context, storage::Database& database, auth::Users& users,
      bus::MasterInfo info, const ResourcesConfig& resources, int64_t max_message_bytes);

  Result<auth::Principal> Authenticate(const std::string& token) {
    return users_.Authenticate(token);
  }

  // A forwarded method, for `caller` (PermissionDenied when it needs an admin). Determined's
  // basic rules: an experiment belongs to the user who created it (the api records the caller);
  // anyone may read, pause, activate, cancel or kill any experiment, and only its owner or an
  // admin may delete it.
  template <class Req>
  Result<typename Forwarded<Req>::Reply> Call(const auth::Principal& caller, const Req& request) {
    DET_RETURN_IF_ERROR(Allow(caller, Forwarded<Req>::kAccess, Req::kType));
    if constexpr (std::is_same_v<Req, bus::ExperimentCreateRequest>) {
      Req owned = request;
      owned.owner_id = caller.user_id;
      owned.owner = caller.username;
      return Forward(owned);
    } else {
      if constexpr (std::is_same_v<Req, bus::ExperimentActionRequest>) {
        DET_RETURN_IF_ERROR(MayAct(caller, request));
      }
      if constexpr (std::is_same_v<Req, bus::CommandRunRequest>) {
        DET_RETURN_IF_ERROR(CheckCommand(request));
        Req run = request;
        DET_ASSIGN_OR_RETURN(run.run_as, RunAs(caller));
        return Forward(run);
      }
      return Forward(request);
    }
  }

  // What a person may not ask of a command: host folders mounted into its container (only the
  // master mounts checkpoint storage), variables det sets itself (InvalidArgument naming them).
  static Status CheckCommand(const bus::CommandRunRequest& request);
  // Whom `caller`'s tasks run as on agents: their link, else security.default_task, else nobody
  // in particular (the agent's own user).
  Result<std::optional<bus::AgentUserGroup>> RunAs(const auth::Principal& caller);

  // Answered here.
  const bus::MasterInfo& info() const { return info_; }
  // Once the gateway is bound, before any server starts (info() is read without a lock).
  void SetGatewayPort(int port) { info_.gateway_port = port; }
  Result<bus::TaskLogsReply> TaskLogs(const auth::Principal& caller,
                                      const bus::TaskLogsRequest& request);
  // An experiment's checkpoints (read from PostgreSQL); NotFound for an unknown experiment.
  Result<bus::CheckpointList> Checkpoints(const auth::Principal& caller,
                                          const bus::ExperimentCheckpointsRequest& request);
  // A trial's metrics by step (PostgreSQL); NotFound for an unknown trial.
  Result<bus::TrialMetricsReply> TrialMetrics(const auth::Principal& caller,
                                              const bus::TrialMetricsRequest& request);
  // Curves of a few named metrics of many trials at once, for charts that overlay them
  // (storage::ReadMetricSeries): all of an experiment's trials (NotFound for an unknown
  // experiment), or the trials listed (NotFound for an unknown one), with the metric names
  // their latest points offer.
  struct MetricSeriesQuery {
    int64_t experiment_id = 0;  // not 0: its trials (NotFound when unknown); 0: trial_ids
    std::vector<int64_t> trial_ids;
    std::string kind = "validation";
    std::vector<std::string> names;  // none: only the names are read
    int max_points = 200;
    bool with_names = true;  // read the names the trials offer
  };
  static constexpr size_t kMaxSeriesTrials = 5000;
  static constexpr size_t kMaxSeriesNames = 16;
  struct MetricSeriesAnswer {
    std::vector<int64_t> trial_ids;  // the trials read, by id
    bool truncated = false;          // the experiment has more than kMaxSeriesTrials trials
    storage::MetricNames names;
    std::vector<storage::MetricSeries> series;
  };
  Result<MetricSeriesAnswer> MetricSeries(const auth::Principal& caller,
                                          const MetricSeriesQuery& query);
  // The autoscaler's instances and decisions, as the master stored them.
  Result<bus::InstanceList> Instances(const auth::Principal& caller,
                                      const bus::InstanceListRequest& request);
  Result<bus::ScalingDecisionList> ScalingDecisions(const auth::Principal& caller,
                                                    const bus::ScalingDecisionListRequest& request);
  // Where /metrics reads the bus's counters; set by the master once its sockets exist.
  void SetBusCounters(std::function<BusCounters()> read) { bus_counters_ = std::move(read); }
  // Where master.logs reads the master's recent log lines (unset: there are none to read).
  void SetLogBuffer(std::shared_ptr<LogBuffer> logs) { logs_ = std::move(logs); }
  // security.default_task: whom the commands of users not linked to an account run as (unset:
  // as the agent). Before any server starts.
  void SetDefaultTask(std::optional<bus::AgentUserGroup> account) {
    default_task_ = std::move(account);
  }
  void SetLogRetention(LogRetention* retention) { retention_ = retention; }
  // Admins: log retention now.
  Result<bus::TaskCleanupLogsReply> CleanupLogs(const auth::Principal& caller);
  // The master's recent log lines (admins).
  Result<bus::MasterLogsReply> MasterLogs(const auth::Principal& caller,
                                          const bus::MasterLogsRequest& request);
  // /metrics: the cluster in Prometheus' text format (prometheus.h).
  Result<std::string> Metrics(const auth::Principal& caller);
  // The configured pools with their connected agents' slots.
  Result<bus::ResourcePoolList> ResourcePools(const auth::Principal& caller);
  auth::Users& users() { return users_; }

 private:
  // A client of `owner`'s inproc endpoint: an idle one, or a new one. Clients are reused (a
  // socket per call would cost more than the call) and never shared by two calls at once.
  std::unique_ptr<bus::RpcClient> TakeClient(Owner owner);
  void GiveClient(Owner owner, std::unique_ptr<bus::RpcClient> client);
  static Status Allow(const auth::Principal& caller, Access access, std::string_view method);
  // Whether `caller` may take `request`'s action (delete: the owner or an admin).
  Status MayAct(const auth::Principal& caller, const bus::ExperimentActionRequest& request);
  template <class Req>
  Result<typename Forwarded<Req>::Reply> Forward(const Req& request) {
    std::unique_ptr<bus::RpcClient> client = TakeClient(Forwarded<Req>::kOwner);
    auto reply = client->Call<Req, typename Forwarded<Req>::Reply>(request);
    GiveClient(Forwarded<Req>::kOwner, std::move(client));
    return reply;
  }

  zmq::context_t& context_;
  storage::Database& database_;
  auth::Users& users_;
  bus::MasterInfo info_;
  std::vector<bus::ResourcePoolSummary> pools_;
  std::function<BusCounters()> bus_counters_;
  std::optional<bus::AgentUserGroup> default_task_;
  std::shared_ptr<LogBuffer> logs_;
  LogRetention* retention_ =
      nullptr;  // the master's; outlives this  // as configured; counts filled per call
  int64_t max_message_bytes_;
  std::mutex mu_;                                                     // guards idle_
  std::array<std::vector<std::unique_ptr<bus::RpcClient>>, 2> idle_;  // by Owner
};

}  // namespace det::master
