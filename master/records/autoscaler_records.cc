#include "master/records/autoscaler_records.h"

#include <nlohmann/json.hpp>

namespace det::master {
namespace {

using nlohmann::json;

std::vector<std::string> Strings(const std::string& text) {
  auto parsed = json::parse(text, nullptr, /*allow_exceptions=*/false);
  std::vector<std::string> out;
  if (!parsed.is_array()) return out;
  for (const auto& item : parsed) {
    if (item.is_string()) out.push_back(item.get<std::string>());
  }
  return out;
}

}  // namespace

storage::InstanceRecord ToRecord(const bus::InstanceInfo& i) {
  storage::InstanceRecord record{i.id,         i.provider, i.resource_pool, i.instance_type,
                                 i.spot,       i.state,    std::nullopt,    i.launched_at,
                                 std::nullopt, i.zone,     i.agent};
  if (!i.agent.empty()) record.agent_id = i.id;
  if (i.terminated_at != 0) record.terminated_ns = i.terminated_at;
  return record;
}

bus::InstanceInfo FromRecord(const storage::InstanceRecord& r) {
  return {r.id,   r.resource_pool, r.provider,    r.instance_type, r.zone,
          r.spot, r.state,         r.agent_state, r.launched_ns,   r.terminated_ns.value_or(0)};
}

storage::ScalingDecisionRecord ToRecord(const bus::ScalingDecisionEvent& d) {
  json terminate = json::array();
  for (const auto& t : d.terminated) terminate.push_back({{"id", t.id}, {"reason", t.reason}});
  json reasons = json::array();
  if (!d.launch_reason.empty()) reasons.push_back(d.launch_reason);
  return {0,
          d.resource_pool,
          d.decided_at,
          d.launch,
          terminate.dump(),
          reasons.dump(),
          json(d.launched).dump(),
          d.error};
}

bus::ScalingDecisionEvent FromRecord(const storage::ScalingDecisionRecord& r) {
  bus::ScalingDecisionEvent d;
  d.resource_pool = r.resource_pool;
  d.decided_at = r.decided_ns;
  d.launch = r.launch;
  d.launched = Strings(r.launched_json);
  const std::vector<std::string> reasons = Strings(r.reasons_json);
  if (!reasons.empty()) d.launch_reason = reasons.front();
  auto terminate = json::parse(r.terminate_json, nullptr, false);
  if (terminate.is_array()) {
    for (const auto& t : terminate) {
      if (t.is_object()) d.terminated.push_back({t.value("id", ""), t.value("reason", "")});
    }
  }
  d.error = r.error;
  return d;
}

}  // namespace det::master
