#include "master/cluster/resource_config.h"

#include <cstdio>
#include <map>
#include <set>

#include "cloud_aws/aws_config.h"
#include "cloud_gcp/gcp_config.h"
#include "common/strings.h"

namespace det::master {
namespace {

using scheduler::SchedulerConfig;

constexpr const char* kSchedulerTypes[] = {"priority", "fair_share"};
constexpr const char* kFittingPolicies[] = {"best", "worst"};

void ReadScheduler(ConfigReader& reader, SchedulerConfig* config) {
  std::string type = config->type == SchedulerConfig::Type::kPriority ? "priority" : "fair_share";
  reader.ReadOneOf("type", &type, kSchedulerTypes);
  config->type =
      type == "fair_share" ? SchedulerConfig::Type::kFairShare : SchedulerConfig::Type::kPriority;
  std::string fitting = config->fitting == SchedulerConfig::Fitting::kBest ? "best" : "worst";
  reader.ReadOneOf("fitting_policy", &fitting, kFittingPolicies);
  config->fitting =
      fitting == "worst" ? SchedulerConfig::Fitting::kWorst : SchedulerConfig::Fitting::kBest;
  reader.Read("preemption", &config->preemption);
  reader.ReadInt("default_priority", &config->default_priority, scheduler::kMinPriority,
                 scheduler::kMaxPriority);
  reader.Ignore({"allow_heterogeneous_fits"}, "");
}

// Determined writes preemption_timeout in seconds; a duration with a unit ("30m") is taken too.
void ReadTimeout(ConfigReader& reader, std::string_view key, Duration* out) {
  const YAML::Node node = reader.Raw(key);
  if (!node.IsDefined() || node.IsNull()) return;
  const std::string text = node.IsScalar() ? node.Scalar() : "";
  if (!text.empty() && text.find_first_not_of("0123456789") == std::string::npos &&
      text.size() < 10) {
    *out = std::chrono::seconds(std::stoll(text));
    return;
  }
  auto parsed = ParseDuration(text);
  if (!parsed.ok()) {
    reader.Fail(key, "\"" + text + "\" is not seconds or a duration (e.g. 3600 or \"1h\")");
    return;
  }
  *out = *parsed;
}

void ReadPortRange(ConfigReader& reader, std::string_view key, PortRange* range) {
  if (!reader.Has(key)) return;
  std::string text;
  reader.Read(key, &text);
  int first = 0;
  int last = 0;
  char colon = 0;
  char extra = 0;
  if (std::sscanf(text.c_str(), "%d%c%d%c", &first, &colon, &last, &extra) != 3 || colon != ':' ||
      first < 1 || last > 65535 || first > last) {
    reader.Fail(key, "\"" + text + "\" is not a port range \"MIN:MAX\" within 1..65535");
    return;
  }
  *range = {first, last};
}

// Determined's task_container_defaults fields this project does not apply to tasks (yet).
void IgnoreContainerFields(ConfigReader& reader) {
  reader.Ignore({"image",
                 "shm_size_bytes",
                 "network_mode",
                 "dtrain_network_interface",
                 "registry_auth",
                 "force_pull_image",
                 "environment_variables",
                 "add_capabilities",
                 "drop_capabilities",
                 "devices",
                 "bind_mounts",
                 "work_dir",
                 "startup_hook",
                 "log_policies",
                 "cpu_pod_spec",
                 "gpu_pod_spec",
                 "checkpoint_gc_pod_spec",
                 "kubernetes",
                 "slurm",
                 "pbs"},
                "each experiment's environment and resources say it");
}

// `task_container_defaults`: the master's (with `distributed`) or a pool's (without: the
// distributed-training settings are the master's only, and named so when a pool sets them).
void ReadContainerDefaults(ConfigReader& reader, Duration* preemption_timeout,
                           DistributedTrainingConfig* distributed) {
  ReadTimeout(reader, "preemption_timeout", preemption_timeout);
  if (!distributed) {
    IgnoreContainerFields(reader);
    for (const char* key : {"gloo_port_range", "nccl_port_range", "rendezvous_timeout"}) {
      if (reader.Has(key)) reader.Fail(key, "is set in master.yaml's task_container_defaults only");
    }
    return;
  }
  IgnoreContainerFields(reader);
  ReadPortRange(reader, "gloo_port_range", &distributed->gloo_port_range);
  ReadPortRange(reader, "nccl_port_range", &distributed->nccl_port_range);
  ReadTimeout(reader, "rendezvous_timeout", &distributed->rendezvous_timeout);
}

void ReadPool(ConfigReader& reader, const ResourcesConfig& defaults, ResourcePoolConfig* pool) {
  reader.Read("pool_name", &pool->pool_name);
  if (pool->pool_name.empty()) reader.Fail("pool_name", "is required");
  reader.Read("description", &pool->description);
  reader.ReadInt("max_aux_containers_per_agent", &pool->max_aux_containers_per_agent, 0, 100000);
  if (reader.Has("agent_reattach_enabled")) {
    bool reattach = true;
    reader.Read("agent_reattach_enabled", &reattach);
    if (!reattach) {
      reader.Warn("agent_reattach_enabled",
                  "false is ignored: a reconnecting agent always keeps its running tasks here "
                  "(as in Determined since 0.21)");
    }
  }
  if (reader.Has("agent_reconnect_wait")) {
    Duration wait{};
    reader.Read("agent_reconnect_wait", &wait);
    pool->agent_reconnect_wait = wait;
  }
  pool->scheduler = defaults.resource_manager.scheduler;
  if (reader.Has("scheduler")) {
    pool->scheduler = {};
    ReadScheduler(reader.Child("scheduler"), &pool->scheduler);
  }
  pool->preemption_timeout = defaults.preemption_timeout;
  ReadContainerDefaults(reader.Child("task_container_defaults"), &pool->preemption_timeout,
                        nullptr);
  if (reader.Has("provider")) {
    // The provider types the master knows: the same the autoscaler is built with.
    pool->provider = provider::ReadProviderConfig(
        reader.Child("provider"), {provider::LocalSection(), aws::AwsSection(), gcp::GcpSection()});
  }
}

}  // namespace

void ReadResourcesConfig(ConfigReader& reader, ResourcesConfig* config) {
  ConfigReader& manager = reader.Child("resource_manager");
  std::string type = "agent";
  constexpr const char* kManagerTypes[] = {"agent"};
  manager.ReadOneOf("type", &type, kManagerTypes);
  manager.Ignore({"cluster_name", "name", "metadata", "no_default_resource_pools"}, "");
  manager.Ignore({"require_authentication", "client_ca"},
                 "agents always authenticate here, with CURVE keys (bus.security)");
  ReadScheduler(manager.Child("scheduler"), &config->resource_manager.scheduler);
  ReadContainerDefaults(reader.Child("task_container_defaults"), &config->preemption_timeout,
                        &config->distributed);

  if (reader.Has("resource_pools")) {
    config->resource_pools.clear();
  } else {
    ResourcePoolConfig& only = config->resource_pools.front();
    only.scheduler = config->resource_manager.scheduler;
    only.preemption_timeout = config->preemption_timeout;
  }
  std::set<std::string> names;
  for (ConfigReader* item : reader.Items("resource_pools")) {
    ResourcePoolConfig& pool = config->resource_pools.emplace_back();
    ReadPool(*item, *config, &pool);
    if (!pool.pool_name.empty() && !names.insert(pool.pool_name).second) {
      item->Fail("pool_name", "\"" + pool.pool_name + "\" names another pool too");
    }
  }
  // Unset default pools are "default" when there is one, else the first pool.
  ResourceManagerConfig& rm = config->resource_manager;
  const std::string fallback = FindPool(*config, "default") || config->resource_pools.empty()
                                   ? "default"
                                   : config->resource_pools.front().pool_name;
  rm.default_compute_resource_pool = rm.default_aux_resource_pool = fallback;
  manager.Read("default_compute_resource_pool", &rm.default_compute_resource_pool);
  manager.Read("default_aux_resource_pool", &rm.default_aux_resource_pool);
  for (const auto& [key, name] :
       {std::pair{"default_compute_resource_pool", &rm.default_compute_resource_pool},
        std::pair{"default_aux_resource_pool", &rm.default_aux_resource_pool}}) {
    if (FindPool(*config, *name)) continue;
    manager.Fail(key, "\"" + *name + "\" is not one of resource_pools (" +
                          Join(PoolNames(*config), ", ") + ")");
  }
}

std::vector<std::string> PoolNames(const ResourcesConfig& config) {
  std::vector<std::string> names;
  for (const ResourcePoolConfig& pool : config.resource_pools) names.push_back(pool.pool_name);
  return names;
}

const ResourcePoolConfig* FindPool(const ResourcesConfig& config, const std::string& name) {
  for (const ResourcePoolConfig& pool : config.resource_pools) {
    if (pool.pool_name == name) return &pool;
  }
  return nullptr;
}

}  // namespace det::master
