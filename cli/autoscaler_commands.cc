#include "cli/autoscaler_commands.h"

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "bus/catalog/autoscaler.h"
#include "bus/catalog/cluster_json.h"
#include "bus/catalog/master.h"
#include "cli/output.h"
#include "cli/rpc_call.h"

namespace det::cli {
namespace {

using bus::ToJson;

template <class Item>
void PrintJson(const CliOptions& options, const std::vector<Item>& items) {
  nlohmann::ordered_json all = nlohmann::ordered_json::array();
  for (const auto& item : items) all.push_back(ToJson(item));
  PrintReply(options, all);
}

int Instances(const CliOptions& options, const bus::InstanceListRequest& request) {
  auto reply = Call<bus::InstanceListRequest, bus::InstanceList>(options, request);
  if (!reply.ok()) return Fail(reply.status());
  if (options.machine_readable()) {
    PrintJson(options, reply->instances);
    return 0;
  }
  std::printf("%-28s %-12s %-8s %-14s %-14s %-10s %-9s %-21s %s\n", "ID", "POOL", "PROVIDER",
              "TYPE", "ZONE", "STATE", "AGENT", "LAUNCHED", "TERMINATED");
  for (const auto& i : reply->instances) {
    const std::string type = i.instance_type + (i.spot ? " (spot)" : "");
    std::printf("%-28s %-12s %-8s %-14s %-14s %-10s %-9s %-21s %s\n", i.id.c_str(),
                i.resource_pool.c_str(), i.provider.c_str(), type.c_str(), i.zone.c_str(),
                i.state.c_str(), i.agent.empty() ? "-" : i.agent.c_str(),
                UtcTime(i.launched_at).c_str(), UtcTime(i.terminated_at).c_str());
  }
  return 0;
}

int Decisions(const CliOptions& options, const bus::ScalingDecisionListRequest& request) {
  auto reply = Call<bus::ScalingDecisionListRequest, bus::ScalingDecisionList>(options, request);
  if (!reply.ok()) return Fail(reply.status());
  if (options.machine_readable()) {
    PrintJson(options, reply->decisions);
    return 0;
  }
  for (const auto& d : reply->decisions) {
    std::printf("%s  pool %s\n", UtcTime(d.decided_at).c_str(), d.resource_pool.c_str());
    if (d.launch > 0) {
      std::printf("  launch %d, launched %zu: %s\n", d.launch, d.launched.size(),
                  d.launch_reason.c_str());
    }
    for (const auto& t : d.terminated) {
      std::printf("  terminate %s: %s\n", t.id.c_str(), t.reason.c_str());
    }
    if (!d.error.empty()) std::printf("  error: %s\n", d.error.c_str());
  }
  return 0;
}

// Per pool with a provider: its limits, live instances by agent state, and the latest decision.
int ShowAutoscalerStatus(const CliOptions& options) {
  auto pools = Call<bus::ResourcePoolListRequest, bus::ResourcePoolList>(options, {});
  if (!pools.ok()) return Fail(pools.status());
  auto instances = Call<bus::InstanceListRequest, bus::InstanceList>(options, {});
  if (!instances.ok()) return Fail(instances.status());
  nlohmann::ordered_json all = nlohmann::ordered_json::array();
  for (const auto& pool : pools->pools) {
    if (pool.provider.empty()) continue;
    auto latest =
        Call<bus::ScalingDecisionListRequest, bus::ScalingDecisionList>(options, {pool.name, 1});
    if (!latest.ok()) return Fail(latest.status());
    nlohmann::ordered_json counts = {{"live", 0}, {"connected", 0}, {"idle", 0}, {"no_agent", 0}};
    for (const auto& i : instances->instances) {
      if (i.resource_pool != pool.name) continue;
      counts["live"] = counts["live"].get<int>() + 1;
      const std::string key = i.agent.empty() || i.agent == "lost" ? "no_agent" : i.agent;
      counts[key] = counts[key].get<int>() + 1;
    }
    all.push_back(
        {{"resource_pool", pool.name},
         {"provider", pool.provider},
         {"min_instances", pool.min_instances},
         {"max_instances", pool.max_instances},
         {"slots_per_instance", pool.slots_per_instance},
         {"instances", counts},
         {"latest_decision", latest->decisions.empty() ? nlohmann::ordered_json(nullptr)
                                                       : ToJson(latest->decisions.front())}});
  }
  if (options.machine_readable()) {
    PrintReply(options, all);
    return 0;
  }
  if (all.empty()) std::printf("no resource pool has a provider: nothing is autoscaled\n");
  for (const auto& pool : all) {
    std::printf(
        "pool %s: %s provider, %d..%d instances of %d slots; %d live (%d busy, %d idle, "
        "%d without an agent)\n",
        pool["resource_pool"].get<std::string>().c_str(),
        pool["provider"].get<std::string>().c_str(), pool["min_instances"].get<int>(),
        pool["max_instances"].get<int>(), pool["slots_per_instance"].get<int>(),
        pool["instances"]["live"].get<int>(), pool["instances"]["connected"].get<int>(),
        pool["instances"]["idle"].get<int>(), pool["instances"]["no_agent"].get<int>());
    const auto& d = pool["latest_decision"];
    if (d.is_null()) {
      std::printf("  no decision yet\n");
      continue;
    }
    std::printf("  latest decision %s:", UtcTime(d["decided_at"].get<int64_t>()).c_str());
    if (d["launch"].get<int>() > 0) {
      std::printf(" launch %d (%s);", d["launch"].get<int>(),
                  d["launch_reason"].get<std::string>().c_str());
    }
    for (const auto& t : d["terminated"]) {
      std::printf(" terminate %s (%s);", t["id"].get<std::string>().c_str(),
                  t["reason"].get<std::string>().c_str());
    }
    if (!d["error"].get<std::string>().empty()) {
      std::printf(" error: %s", d["error"].get<std::string>().c_str());
    }
    std::printf("\n");
  }
  return 0;
}

}  // namespace

void AddAutoscalerCommands(CLI::App& app, const CliOptions& options, int& rc) {
  auto* autoscaler = app.add_subcommand("autoscaler", "the autoscaler's instances and decisions")
                         ->require_subcommand(1);
  autoscaler->add_subcommand("status", "each autoscaled pool: limits, instances, latest decision")
      ->callback([&options, &rc] { rc = ShowAutoscalerStatus(options); });
  auto instances = std::make_shared<bus::InstanceListRequest>();
  auto* list = autoscaler->add_subcommand("instances", "instances the autoscaler manages");
  list->add_option("--resource-pool", instances->resource_pool, "only this pool");
  list->add_flag("--all", instances->all, "also terminated instances");
  list->callback([&options, &rc, instances] { rc = Instances(options, *instances); });

  auto decisions = std::make_shared<bus::ScalingDecisionListRequest>();
  auto* history =
      autoscaler->add_subcommand("decisions", "the latest scaling decisions, newest first");
  history->add_option("--resource-pool", decisions->resource_pool, "only this pool");
  history->add_option("--limit", decisions->limit, "how many (1..1000, default 20)")
      ->check(CLI::Range(1, 1000));
  history->callback([&options, &rc, decisions] { rc = Decisions(options, *decisions); });
}

}  // namespace det::cli
