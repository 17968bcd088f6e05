#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/config.h"
#include "master/cluster/scheduler/scheduler_types.h"
#include "provider/provider_config.h"

namespace det::master {

// A pool's `provider:` section. The master uses its limits (how big the pool can grow, to refuse
// work that could never fit and to count demand) and publishes it for the autoscaler.
using ProviderLimits = provider::ProviderConfig;

// One of `resource_pools` (Determined's names). Agents join a pool by name; an agent naming a pool
// that is not configured is refused.
struct ResourcePoolConfig {
  std::string pool_name;  // required, unique
  std::string description;
  int max_aux_containers_per_agent = 100;               // zero-slot tasks an agent runs at once
  std::optional<Duration> agent_reconnect_wait;         // unset: the master's (bus) setting, 25 s
  scheduler::SchedulerConfig scheduler;                 // `scheduler`; unset: resource_manager's
  Duration preemption_timeout = std::chrono::hours(1);  // `task_container_defaults.
                                                        // preemption_timeout`: then killed
  std::optional<ProviderLimits> provider;
};

// `resource_manager:` (type `agent`, the only one).
struct ResourceManagerConfig {
  scheduler::SchedulerConfig scheduler;  // priority, best fit, no preemption, priority 42
  // Where tasks that name no pool go: with slots / without. Unset: "default" when such a pool
  // exists, else the first pool.
  std::string default_compute_resource_pool = "default";
  std::string default_aux_resource_pool = "default";
};

// Ports a distributed trial's containers may use between them (Determined's firewall guide).
struct PortRange {
  int first = 1024;
  int last = 65535;
  std::string ToString() const { return std::to_string(first) + ":" + std::to_string(last); }
};

// What multi-container trials get from the master-level `task_container_defaults`.
struct DistributedTrainingConfig {
  PortRange gloo_port_range;  // `gloo_port_range: "MIN:MAX"`; the chief's rendezvous port
  PortRange nccl_port_range;  // `nccl_port_range: "MIN:MAX"`
  // `rendezvous_timeout` (seconds or a duration): how long the first container to arrive waits
  // for the others before the allocation fails.
  Duration rendezvous_timeout = std::chrono::minutes(5);
};

struct ResourcesConfig {
  ResourceManagerConfig resource_manager;
  std::vector<ResourcePoolConfig> resource_pools = {{.pool_name = "default"}};
  Duration preemption_timeout = std::chrono::hours(1);  // master-level task_container_defaults
  DistributedTrainingConfig distributed;
};

// Reads `resource_manager`, `resource_pools` and `task_container_defaults` from the top of
// master.yaml into `config`, recording errors (field, value, what is allowed) on `reader`:
// unknown scheduler types or fitting policies, priorities outside 1..99, duplicate or missing
// pool names, default pools that are not configured, provider limits out of range.
void ReadResourcesConfig(ConfigReader& reader, ResourcesConfig* config);

// The configured pools' names, in order.
std::vector<std::string> PoolNames(const ResourcesConfig& config);

// The pool called `name`, or nullptr.
const ResourcePoolConfig* FindPool(const ResourcesConfig& config, const std::string& name);

}  // namespace det::master
