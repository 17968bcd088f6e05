#include "master/front/master_calls.h"

#include "storage/cloud_repo.h"

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

}  // namespace

MasterCalls::MasterCalls(ActorCalls& calls, RecordReads& reads, storage::Database& database,
                         const ResourcesConfig& resources)
    : calls_(calls), reads_(reads), database_(database) {
  for (const ResourcePoolConfig& pool : resources.resource_pools) {
    pools_.push_back(PoolSummary(pool, resources.resource_manager));
  }
}

Result<bus::ResourcePoolList> MasterCalls::ResourcePools(const auth::Principal& caller) {
  DET_ASSIGN_OR_RETURN(bus::AgentList agents, calls_.Call(caller, bus::AgentListRequest{}));
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

Result<bus::TaskCleanupLogsReply> MasterCalls::CleanupLogs(const auth::Principal& caller) {
  DET_RETURN_IF_ERROR(Allow(caller, Access::kAdmin, bus::TaskCleanupLogsRequest::kType));
  if (!retention_) return Unavailable("log retention is not running");
  DET_ASSIGN_OR_RETURN(int64_t removed, retention_->RunOnce());
  return bus::TaskCleanupLogsReply{removed, retention_->days()};
}

Result<bus::MasterLogsReply> MasterCalls::MasterLogs(const auth::Principal& caller,
                                                     const bus::MasterLogsRequest& request) {
  DET_RETURN_IF_ERROR(Allow(caller, Access::kAdmin, bus::MasterLogsRequest::kType));
  if (request.limit < 1 || request.limit > 10000) {
    return InvalidArgument("limit: " + std::to_string(request.limit) + " is outside 1..10000");
  }
  if (!logs_) return Unavailable("this master keeps no log lines in memory");
  return bus::MasterLogsReply{logs_->After(request.after_id, request.limit)};
}

Result<std::string> MasterCalls::Metrics(const auth::Principal& caller) {
  MetricsSnapshot snapshot;
  for (const auto& pool : pools_) snapshot.pools.push_back(pool.name);
  DET_ASSIGN_OR_RETURN(bus::AgentList agents, calls_.Call(caller, bus::AgentListRequest{}));
  DET_ASSIGN_OR_RETURN(bus::JobList jobs, calls_.Call(caller, bus::JobListRequest{}));
  DET_ASSIGN_OR_RETURN(bus::ExperimentList experiments,
                       calls_.Call(caller, bus::ExperimentListRequest{}));
  DET_ASSIGN_OR_RETURN(snapshot.registry, calls_.Call(caller, bus::RegistryStatsRequest{}));
  snapshot.agents = std::move(agents.agents);
  snapshot.jobs = std::move(jobs.jobs);
  snapshot.experiments = std::move(experiments.experiments);
  if (bus_counters_) snapshot.bus = bus_counters_();
  DET_ASSIGN_OR_RETURN(bus::InstanceList instances, reads_.Instances(caller, {}));
  snapshot.instances = std::move(instances.instances);
  DET_RETURN_IF_ERROR(database_.Run([&](pqxx::work& tx) {
    snapshot.scaling_totals = storage::ScalingTotalsByPool(tx);
    return Status::Ok();
  }));
  return PrometheusText(snapshot);
}

}  // namespace det::master
