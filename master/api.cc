#include "master/api.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "common/environment.h"
#include "master/autoscaler_records.h"
#include "master/endpoints.h"
#include "master/trial_reports.h"
#include "storage/cloud_repo.h"
#include "storage/experiments_repo.h"
#include "storage/tasks_repo.h"
#include "storage/telemetry_repo.h"

namespace det::master {

namespace {

bus::ResourcePoolSummary PoolSummary(const ResourcePoolConfig& pool,
                                     const ResourceManagerConfig& manager) {
  using Config = scheduler::SchedulerConfig;
  bus::ResourcePoolSummary summary;
  summary.name = pool.pool_name;
  summary.description = pool.description;
  summary.scheduler = pool.scheduler.type == Config::Type::kFairShare ? "fair_share" : "priority";
  summary.fitting_policy = pool.scheduler.fitting == Config::Fitting::kWorst ? "worst" : "best";
  summary.preemption = pool.scheduler.preemption;
  summary.default_priority = pool.scheduler.default_priority;
  if (pool.provider) {
    summary.provider = pool.provider->type;
    summary.min_instances = pool.provider->min_instances;
    summary.max_instances = pool.provider->max_instances;
    summary.slots_per_instance = pool.provider->slots_per_instance;
  }
  summary.default_compute = pool.pool_name == manager.default_compute_resource_pool;
  summary.default_aux = pool.pool_name == manager.default_aux_resource_pool;
  return summary;
}

// The total of a checkpoint's files ({"name": bytes, ...}); 0 when unreadable.
int64_t SizeOf(const std::string& resources_json) {
  const auto resources = nlohmann::json::parse(resources_json, nullptr, false);
  int64_t total = 0;
  if (!resources.is_object()) return 0;
  for (const auto& [name, size] : resources.items()) {
    if (size.is_number_integer()) total += size.get<int64_t>();
  }
  return total;
}

}  // namespace

Api::Api(zmq::context_t& context, storage::Database& database, auth::Users& users,
         bus::MasterInfo info, const ResourcesConfig& resources, int64_t max_message_bytes)
    : context_(context),
      database_(database),
      users_(users),
      info_(std::move(info)),
      max_message_bytes_(max_message_bytes) {
  for (const ResourcePoolConfig& pool : resources.resource_pools) {
    pools_.push_back(PoolSummary(pool, resources.resource_manager));
  }
}

Result<bus::ResourcePoolList> Api::ResourcePools(const auth::Principal& caller) {
  DET_ASSIGN_OR_RETURN(bus::AgentList agents, Call(caller, bus::AgentListRequest{}));
  bus::ResourcePoolList list{pools_};
  for (bus::ResourcePoolSummary& pool : list.pools) {
    for (const bus::AgentSummary& agent : agents.agents) {
      if (agent.resource_pool != pool.name || agent.state != "connected") continue;
      ++pool.agents;
      pool.slots += static_cast<int32_t>(agent.slots.size());
      pool.used_slots += agent.used_slots;
    }
  }
  return list;
}

std::unique_ptr<bus::RpcClient> Api::TakeClient(Owner owner) {
  {
    std::lock_guard lock(mu_);
    auto& idle = idle_[static_cast<size_t>(owner)];
    if (!idle.empty()) {
      std::unique_ptr<bus::RpcClient> client = std::move(idle.back());
      idle.pop_back();
      return client;
    }
  }
  const bool registry = owner == Owner::kRegistry;
  // Both may wait on PostgreSQL: the registry answers a change of tasks once it is stored (an
  // array of 10,000 rows, behind whatever the store had queued).
  return std::make_unique<bus::RpcClient>(
      context_, registry ? kRegistryEndpoint : kExperimentsEndpoint, bus::SocketSecurity{},
      bus::RpcClientConfig{.timeout = std::chrono::seconds(30), .attempts = 1},
      bus::SocketLimits{.max_message_bytes = max_message_bytes_});
}

void Api::GiveClient(Owner owner, std::unique_ptr<bus::RpcClient> client) {
  std::lock_guard lock(mu_);
  idle_[static_cast<size_t>(owner)].push_back(std::move(client));
}

Status Api::CheckCommand(const bus::CommandRunRequest& request) {
  if (!request.container.binds.empty()) {
    return InvalidArgument("container.binds: a command may not mount host folders");
  }
  for (const auto& [name, value] : request.env) {
    if (std::string why = WhyNotAWorkloadVariable(name); !why.empty()) {
      return InvalidArgument("env: " + why);
    }
  }
  return Status::Ok();
}

Result<std::optional<bus::AgentUserGroup>> Api::RunAs(const auth::Principal& caller) {
  DET_ASSIGN_OR_RETURN(std::optional<bus::AgentUserGroup> linked,
                       users_.AgentAccount(caller.user_id));
  return linked ? linked : default_task_;
}

Status Api::Allow(const auth::Principal& caller, Access access, std::string_view method) {
  if (access != Access::kAdmin || caller.admin) return Status::Ok();
  return PermissionDenied(std::string(method) + " is for admins only (you are \"" +
                          caller.username + "\")");
}

Status Api::MayAct(const auth::Principal& caller, const bus::ExperimentActionRequest& request) {
  if (request.action != "delete" || caller.admin) return Status::Ok();
  DET_ASSIGN_OR_RETURN(bus::ExperimentGetReply experiment,
                       Forward(bus::ExperimentGetRequest{request.id}));
  const bus::ExperimentSummary& summary = experiment.experiment;
  if (summary.owner_id == 0 || summary.owner_id == caller.user_id) return Status::Ok();
  return PermissionDenied("experiment " + std::to_string(request.id) + " belongs to \"" +
                          summary.owner + "\": only its owner or an admin may delete it");
}

Result<bus::TaskLogsReply> Api::TaskLogs(const auth::Principal&,
                                         const bus::TaskLogsRequest& request) {
  bus::TaskLogsReply reply;
  if (request.tail < 0 || request.since < 0 || request.until < 0) {
    return InvalidArgument("tail, since and until must not be negative");
  }
  Status read = database_.Run([&](pqxx::work& tx) -> Status {
    int limit = std::clamp(request.limit, 1, 10000);
    reply = bus::TaskLogsReply{};
    auto task = storage::GetTask(tx, request.task_id);
    if (!task.ok()) return task.status();
    // The end is stored after the task's last log batch (Store keeps order), so a task that has
    // ended has all its lines stored.
    reply.task_ended = task->end_ns.has_value();
    storage::LogQuery query{request.after_id};
    if (request.since > 0) query.since_ns = request.since;
    if (request.until > 0) query.until_ns = request.until;
    if (request.tail > 0) {
      query.after_id = 0;
      DET_ASSIGN_OR_RETURN(storage::TailStart start,
                           storage::TaskLogTailStart(tx, request.task_id, query, request.tail));
      query.after_id = reply.start_after_id = start.after_id;
      reply.tail_lines = start.lines;
      limit = static_cast<int>(std::min<int64_t>(limit, start.lines));
      if (limit == 0) return Status::Ok();
    }
    if (request.chunks) {
      DET_ASSIGN_OR_RETURN(auto chunks,
                           storage::ReadTaskLogChunks(tx, request.task_id, query, limit));
      for (auto& chunk : chunks) {
        reply.chunks.push_back({chunk.id, std::move(chunk.agent_id),
                                static_cast<int32_t>(chunk.codec), std::move(chunk.data),
                                chunk.line_count});
      }
      return Status::Ok();
    }
    DET_ASSIGN_OR_RETURN(auto lines, storage::ReadTaskLogs(tx, request.task_id, query, limit));
    for (auto& stored : lines) {
      reply.lines.push_back({stored.id, stored.line.timestamp_ns, std::move(stored.line.agent_id),
                             std::move(stored.line.stdtype), std::move(stored.line.log)});
    }
    return Status::Ok();
  });
  if (!read.ok()) return read;
  return reply;
}

Result<bus::CheckpointList> Api::Checkpoints(const auth::Principal&,
                                             const bus::ExperimentCheckpointsRequest& request) {
  bus::CheckpointList reply;
  DET_RETURN_IF_ERROR(database_.Run([&](pqxx::work& tx) -> Status {
    reply.checkpoints.clear();
    DET_RETURN_IF_ERROR(storage::GetExperiment(tx, request.id).status());
    for (const auto& trial : storage::ListTrials(tx, request.id)) {
      for (const auto& c : storage::ListCheckpoints(tx, trial.id)) {
        reply.checkpoints.push_back({c.uuid, c.trial_id, c.steps_completed, c.state,
                                     SizeOf(c.resources_json), c.reported_ns});
      }
    }
    return Status::Ok();
  }));
  return reply;
}

Result<bus::TrialMetricsReply> Api::TrialMetrics(const auth::Principal&,
                                                 const bus::TrialMetricsRequest& request) {
  DET_RETURN_IF_ERROR(CheckMetricGroup(request.kind, "kind"));
  if (request.limit < 1 || request.limit > 10000) {
    return InvalidArgument("limit: " + std::to_string(request.limit) + " is outside 1..10000");
  }
  if (request.max_points != 0 &&
      (request.max_points < 2 || request.max_points > storage::kMetricCurveMaxPoints)) {
    return InvalidArgument("max_points: " + std::to_string(request.max_points) + " is outside 2.." +
                           std::to_string(storage::kMetricCurveMaxPoints));
  }
  bus::TrialMetricsReply reply;
  DET_RETURN_IF_ERROR(database_.Run([&](pqxx::work& tx) -> Status {
    reply.metrics.clear();
    DET_RETURN_IF_ERROR(storage::GetTrial(tx, request.trial_id).status());
    storage::MetricCurve curve;
    if (request.max_points > 0) {
      DET_ASSIGN_OR_RETURN(curve, storage::ReadMetricCurve(tx, request.trial_id, request.kind,
                                                           request.after_step, request.max_points));
    } else {
      curve.points = storage::ReadMetrics(tx, request.trial_id, request.kind, request.after_step,
                                          request.limit);
    }
    reply.downsampled = curve.downsampled;
    for (const auto& point : curve.points) {
      reply.metrics.push_back({point.step, point.run_id, point.metrics_json});
    }
    return Status::Ok();
  }));
  return reply;
}

Result<Api::MetricSeriesAnswer> Api::MetricSeries(const auth::Principal&,
                                                  const MetricSeriesQuery& query) {
  DET_RETURN_IF_ERROR(CheckMetricGroup(query.kind, "group"));
  if (query.names.size() > kMaxSeriesNames) {
    return InvalidArgument("metric names: " + std::to_string(query.names.size()) +
                           " asked for, at most " + std::to_string(kMaxSeriesNames));
  }
  if (query.trial_ids.size() > kMaxSeriesTrials) {
    return InvalidArgument("trial_ids: " + std::to_string(query.trial_ids.size()) +
                           " asked for, at most " + std::to_string(kMaxSeriesTrials));
  }
  MetricSeriesAnswer answer;
  DET_RETURN_IF_ERROR(database_.Run([&](pqxx::work& tx) -> Status {
    answer = {};
    if (query.experiment_id != 0) {
      DET_RETURN_IF_ERROR(storage::GetExperiment(tx, query.experiment_id).status());
      for (const auto& trial : storage::ListTrials(tx, query.experiment_id)) {
        if (answer.trial_ids.size() == kMaxSeriesTrials) {
          answer.truncated = true;
          break;
        }
        answer.trial_ids.push_back(trial.id);
      }
    } else {
      for (int64_t id : query.trial_ids) DET_RETURN_IF_ERROR(storage::GetTrial(tx, id).status());
      answer.trial_ids = query.trial_ids;
    }
    if (query.with_names) answer.names = storage::ReadMetricNames(tx, answer.trial_ids);
    DET_ASSIGN_OR_RETURN(answer.series, storage::ReadMetricSeries(tx, answer.trial_ids, query.kind,
                                                                  query.names, query.max_points));
    return Status::Ok();
  }));
  return answer;
}

Result<bus::TaskCleanupLogsReply> Api::CleanupLogs(const auth::Principal& caller) {
  DET_RETURN_IF_ERROR(Allow(caller, Access::kAdmin, bus::TaskCleanupLogsRequest::kType));
  if (!retention_) return Unavailable("log retention is not running");
  DET_ASSIGN_OR_RETURN(int64_t removed, retention_->RunOnce());
  return bus::TaskCleanupLogsReply{removed, retention_->days()};
}

Result<bus::MasterLogsReply> Api::MasterLogs(const auth::Principal& caller,
                                             const bus::MasterLogsRequest& request) {
  DET_RETURN_IF_ERROR(Allow(caller, Access::kAdmin, bus::MasterLogsRequest::kType));
  if (request.limit < 1 || request.limit > 10000) {
    return InvalidArgument("limit: " + std::to_string(request.limit) + " is outside 1..10000");
  }
  if (!logs_) return Unavailable("this master keeps no log lines in memory");
  return bus::MasterLogsReply{logs_->After(request.after_id, request.limit)};
}

Result<bus::InstanceList> Api::Instances(const auth::Principal&,
                                         const bus::InstanceListRequest& request) {
  bus::InstanceList reply;
  DET_RETURN_IF_ERROR(database_.Run([&](pqxx::work& tx) -> Status {
    reply.instances.clear();
    for (const auto& record : storage::ListInstances(tx, request.resource_pool, !request.all)) {
      reply.instances.push_back(FromRecord(record));
    }
    return Status::Ok();
  }));
  return reply;
}

Result<bus::ScalingDecisionList> Api::ScalingDecisions(
    const auth::Principal&, const bus::ScalingDecisionListRequest& request) {
  if (request.limit < 1 || request.limit > 1000) {
    return InvalidArgument("limit: " + std::to_string(request.limit) + " is outside 1..1000");
  }
  bus::ScalingDecisionList reply;
  DET_RETURN_IF_ERROR(database_.Run([&](pqxx::work& tx) -> Status {
    reply.decisions.clear();
    for (const auto& record :
         storage::ListScalingDecisions(tx, request.resource_pool, request.limit)) {
      reply.decisions.push_back(FromRecord(record));
    }
    return Status::Ok();
  }));
  return reply;
}

Result<std::string> Api::Metrics(const auth::Principal& caller) {
  MetricsSnapshot snapshot;
  for (const auto& pool : pools_) snapshot.pools.push_back(pool.name);
  DET_ASSIGN_OR_RETURN(bus::AgentList agents, Call(caller, bus::AgentListRequest{}));
  DET_ASSIGN_OR_RETURN(bus::JobList jobs, Call(caller, bus::JobListRequest{}));
  DET_ASSIGN_OR_RETURN(bus::ExperimentList experiments, Call(caller, bus::ExperimentListRequest{}));
  DET_ASSIGN_OR_RETURN(snapshot.registry, Call(caller, bus::RegistryStatsRequest{}));
  snapshot.agents = std::move(agents.agents);
  snapshot.jobs = std::move(jobs.jobs);
  snapshot.experiments = std::move(experiments.experiments);
  if (bus_counters_) snapshot.bus = bus_counters_();
  DET_ASSIGN_OR_RETURN(bus::InstanceList instances, Instances(caller, {}));
  snapshot.instances = std::move(instances.instances);
  DET_RETURN_IF_ERROR(database_.Run([&](pqxx::work& tx) {
    snapshot.scaling_totals = storage::ScalingTotalsByPool(tx);
    return Status::Ok();
  }));
  return PrometheusText(snapshot);
}

}  // namespace det::master
