#include "master/cluster/scheduler/fit_check.h"

#include <algorithm>
#include <map>

namespace det::master::scheduler {
namespace {

bool FitsInstances(int32_t slots, bool single_node, const ProviderSize& provider) {
  const int32_t per = provider.slots_per_instance;
  if (slots <= per) return true;
  if (single_node || per <= 0 || slots % per != 0) return false;
  return slots / per <= provider.max_instances;
}

bool FitsAgents(int32_t slots, bool single_node, const std::map<int32_t, int>& sizes) {
  for (const auto& [size, count] : sizes) {
    if (size >= slots) return true;
    if (!single_node && size > 0 && slots % size == 0 && slots / size <= count) return true;
  }
  return false;
}

std::string Describe(const std::map<int32_t, int>& sizes) {
  std::string text;
  for (const auto& [size, count] : sizes) {
    if (!text.empty()) text += ", ";
    text += std::to_string(count) + (count == 1 ? " agent" : " agents") + " of " +
            std::to_string(size) + (size == 1 ? " slot" : " slots");
  }
  return text;
}

std::string SpanNote(bool single_node) {
  return single_node ? "; the task is single-node, so it cannot span agents"
                     : "; a task spans agents only as a multiple of an agent's slots";
}

}  // namespace

Status CheckCanEverFit(int32_t slots, bool single_node, const std::string& pool_name,
                       const std::vector<int32_t>& agent_slots,
                       const std::optional<ProviderSize>& provider) {
  if (slots <= 0) return Status::Ok();
  std::map<int32_t, int> sizes;
  for (int32_t size : agent_slots) ++sizes[size];
  if (FitsAgents(slots, single_node, sizes)) return Status::Ok();
  const std::string asks = "the task asks for " + std::to_string(slots) + " slots, but pool \"" +
                           pool_name + "\" can never provide them: ";
  if (provider) {
    if (FitsInstances(slots, single_node, *provider)) return Status::Ok();
    return InvalidArgument(asks + "it grows to at most " + std::to_string(provider->max_instances) +
                           " instances of " + std::to_string(provider->slots_per_instance) +
                           " slots" + SpanNote(single_node));
  }
  if (sizes.empty()) return Status::Ok();  // no agents yet: nothing to judge by
  return InvalidArgument(asks + "it has " + Describe(sizes) + SpanNote(single_node));
}

}  // namespace det::master::scheduler
