#include "cli/agent_commands.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "bus/catalog/cluster_json.h"
#include "bus/catalog/master.h"
#include "cli/output.h"
#include "cli/rpc_call.h"

namespace det::cli {

using bus::ToJson;

namespace {

std::string EnabledText(const bus::AgentSummary& a) {
  if (a.draining) return "draining";
  return a.enabled ? "yes" : "no";
}

int PrintAgent(const CliOptions& options, const bus::AgentSummary& a) {
  if (options.machine_readable()) {
    PrintReply(options, ToJson(a));
  } else {
    std::cout << "agent " << a.id << ": enabled " << EnabledText(a) << ", " << a.used_slots << "/"
              << a.slots.size() << " slots in use";
    if (!a.disabled_slots.empty()) std::cout << ", " << a.disabled_slots.size() << " disabled";
    if (!a.interruption.empty()) std::cout << "; its machine is going: " << a.interruption;
    std::cout << "\n";
  }
  return 0;
}

}  // namespace

int AgentList(const CliOptions& options) {
  auto list = Call<bus::AgentListRequest, bus::AgentList>(options, {});
  if (!list.ok()) return Fail(list.status());
  if (options.machine_readable()) {
    nlohmann::ordered_json all = nlohmann::ordered_json::array();
    for (const auto& a : list->agents) all.push_back(ToJson(a));
    PrintReply(options, all);
    return 0;
  }
  std::printf("%-24s %-10s %-16s %5s %4s %-8s %5s  %s\n", "AGENT ID", "STATE", "RESOURCE POOL",
              "SLOTS", "USED", "ENABLED", "UTIL%", "LAST HEARD");
  for (const auto& a : list->agents) {
    std::string util = "-";
    if (!a.utilization.empty()) {
      int64_t total = 0;
      for (const auto& u : a.utilization) total += u.utilization_percent;
      util = std::to_string(total / static_cast<int64_t>(a.utilization.size()));
    }
    std::printf("%-24s %-10s %-16s %5zu %4d %-8s %5s  %lld ms ago%s\n", a.id.c_str(),
                a.state.c_str(), a.resource_pool.c_str(), a.slots.size(), a.used_slots,
                EnabledText(a).c_str(), util.c_str(), static_cast<long long>(a.last_heard_ms_ago),
                a.interruption.empty() ? "" : ("  (" + a.interruption + ")").c_str());
  }
  return 0;
}

int AgentEnable(const CliOptions& options, const std::string& agent_id, bool enabled, bool drain) {
  auto reply = Call<bus::AgentEnableRequest, bus::AgentReply>(options, {agent_id, enabled, drain});
  if (!reply.ok()) return Fail(reply.status());
  return PrintAgent(options, reply->agent);
}

int SlotEnable(const CliOptions& options, const std::string& agent_id, const std::string& slot_id,
               bool enabled) {
  auto reply = Call<bus::SlotEnableRequest, bus::AgentReply>(options, {agent_id, slot_id, enabled});
  if (!reply.ok()) return Fail(reply.status());
  return PrintAgent(options, reply->agent);
}

int SlotList(const CliOptions& options, const std::string& agent_id) {
  auto list = Call<bus::AgentListRequest, bus::AgentList>(options, {});
  if (!list.ok()) return Fail(list.status());
  nlohmann::ordered_json all = nlohmann::ordered_json::array();
  if (!options.machine_readable()) {
    std::printf("%-24s %-8s %-6s %-8s %-40s %s\n", "AGENT ID", "SLOT", "TYPE", "ENABLED", "UUID",
                "BRAND");
  }
  for (const auto& a : list->agents) {
    if (!agent_id.empty() && a.id != agent_id) continue;
    for (const auto& s : a.slots) {
      const bool enabled = std::find(a.disabled_slots.begin(), a.disabled_slots.end(), s.id) ==
                           a.disabled_slots.end();
      if (options.machine_readable()) {
        all.push_back({{"agent_id", a.id},
                       {"slot_id", s.id},
                       {"type", s.type},
                       {"enabled", enabled},
                       {"uuid", s.uuid},
                       {"brand", s.brand}});
      } else {
        std::printf("%-24s %-8s %-6s %-8s %-40s %s\n", a.id.c_str(), s.id.c_str(), s.type.c_str(),
                    enabled ? "yes" : "no", s.uuid.c_str(), s.brand.c_str());
      }
    }
  }
  if (options.machine_readable()) PrintReply(options, all);
  return 0;
}

int ResourcePoolList(const CliOptions& options) {
  auto list = Call<bus::ResourcePoolListRequest, bus::ResourcePoolList>(options, {});
  if (!list.ok()) return Fail(list.status());
  if (options.machine_readable()) {
    nlohmann::ordered_json all = nlohmann::ordered_json::array();
    for (const auto& pool : list->pools) all.push_back(ToJson(pool));
    PrintReply(options, all);
    return 0;
  }
  std::printf("%-16s %-10s %-7s %-8s %6s %5s %4s  %s\n", "NAME", "SCHEDULER", "FITTING", "PROVIDER",
              "AGENTS", "SLOTS", "USED", "DESCRIPTION");
  for (const auto& pool : list->pools) {
    std::string name = pool.name;
    if (pool.default_compute) name += "*";
    std::printf("%-16s %-10s %-7s %-8s %6d %5d %4d  %s\n", name.c_str(), pool.scheduler.c_str(),
                pool.fitting_policy.c_str(), pool.provider.empty() ? "-" : pool.provider.c_str(),
                pool.agents, pool.slots, pool.used_slots, pool.description.c_str());
  }
  std::printf("(* the default pool for tasks with slots)\n");
  return 0;
}

}  // namespace det::cli
