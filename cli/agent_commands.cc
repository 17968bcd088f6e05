#include "cli/agent_commands.h"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "bus/catalog/master.h"
#include "cli/rpc_call.h"

namespace det::cli {
namespace {

nlohmann::ordered_json ToJson(const bus::AgentSummary& a) {
  nlohmann::ordered_json slots = nlohmann::ordered_json::array();
  for (const auto& s : a.slots) {
    slots.push_back({{"id", s.id},
                     {"type", s.type},
                     {"brand", s.brand},
                     {"uuid", s.uuid},
                     {"memory_mib", s.memory_mib}});
  }
  nlohmann::ordered_json utilization = nlohmann::ordered_json::array();
  for (const auto& u : a.utilization) {
    utilization.push_back({{"slot_id", u.slot_id},
                           {"utilization_percent", u.utilization_percent},
                           {"memory_used_mib", u.memory_used_mib}});
  }
  return {{"id", a.id},
          {"state", a.state},
          {"resource_pool", a.resource_pool},
          {"hostname", a.hostname},
          {"version", a.version},
          {"slots", a.slots.size()},
          {"devices", slots},
          {"enabled", a.enabled},
          {"draining", a.draining},
          {"disabled_slots", a.disabled_slots},
          {"used_slots", a.used_slots},
          {"utilization", utilization},
          {"last_heard_ms_ago", a.last_heard_ms_ago}};
}

std::string EnabledText(const bus::AgentSummary& a) {
  if (a.draining) return "draining";
  return a.enabled ? "yes" : "no";
}

int PrintAgent(const CliOptions& options, const bus::AgentSummary& a) {
  if (options.json) {
    std::cout << ToJson(a).dump() << "\n";
  } else {
    std::cout << "agent " << a.id << ": enabled " << EnabledText(a) << ", " << a.used_slots << "/"
              << a.slots.size() << " slots in use";
    if (!a.disabled_slots.empty()) std::cout << ", " << a.disabled_slots.size() << " disabled";
    std::cout << "\n";
  }
  return 0;
}

}  // namespace

int AgentList(const CliOptions& options) {
  auto list = Call<bus::AgentListRequest, bus::AgentList>(options, {});
  if (!list.ok()) return Fail(list.status());
  if (options.json) {
    nlohmann::ordered_json all = nlohmann::ordered_json::array();
    for (const auto& a : list->agents) all.push_back(ToJson(a));
    std::cout << all.dump() << "\n";
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
    std::printf("%-24s %-10s %-16s %5zu %4d %-8s %5s  %lld ms ago\n", a.id.c_str(), a.state.c_str(),
                a.resource_pool.c_str(), a.slots.size(), a.used_slots, EnabledText(a).c_str(),
                util.c_str(), static_cast<long long>(a.last_heard_ms_ago));
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

}  // namespace det::cli
