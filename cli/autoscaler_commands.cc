#include "cli/autoscaler_commands.h"

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "bus/catalog/autoscaler.h"
#include "bus/catalog/cluster_json.h"
#include "cli/rpc_call.h"

namespace det::cli {
namespace {

using bus::ToJson;

template <class Item>
void PrintJson(const std::vector<Item>& items) {
  nlohmann::ordered_json all = nlohmann::ordered_json::array();
  for (const auto& item : items) all.push_back(ToJson(item));
  std::cout << all.dump() << "\n";
}

int Instances(const CliOptions& options, const bus::InstanceListRequest& request) {
  auto reply = Call<bus::InstanceListRequest, bus::InstanceList>(options, request);
  if (!reply.ok()) return Fail(reply.status());
  if (options.json) {
    PrintJson(reply->instances);
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
  if (options.json) {
    PrintJson(reply->decisions);
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

}  // namespace

void AddAutoscalerCommands(CLI::App& app, const CliOptions& options, int& rc) {
  auto* autoscaler = app.add_subcommand("autoscaler", "the autoscaler's instances and decisions")
                         ->require_subcommand(1);
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
