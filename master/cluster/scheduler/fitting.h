#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "master/cluster/scheduler/scheduler_types.h"

namespace det::master::scheduler {

// Agent index and slots taken there; one entry for a single-agent fit, several for a gang.
using Fit = std::vector<std::pair<size_t, int32_t>>;

// The free slots of a pool's agents, indexed by how many each has free, so that a fit is found in
// O(largest agent + log agents) however many agents there are.
//
// Best fit takes the schedulable agent with the fewest free slots that still suffice (packing);
// worst fit the one with the most (spreading); ties go to the earlier agent. A request that fits
// on no single agent and may span agents gets a gang fit: k fully idle agents of the same size P
// with k * P = slots (the largest P that works, then the earliest agents).
//
// Agents that are not schedulable keep their counts (slots freed there are counted) but are never
// chosen. Copyable: a pass copies it to look ahead (what preemptions would free).
class FreeSlotIndex {
 public:
  explicit FreeSlotIndex(const std::vector<AgentView>& agents);

  // Where `slots` (> 0) would go, or nullopt. `single_node` rules out gang fits.
  std::optional<Fit> Find(int32_t slots, SchedulerConfig::Fitting policy, bool single_node) const;
  // Takes `slots` on `agent` (they must be free) / returns them.
  void Take(size_t agent, int32_t slots);
  void Give(size_t agent, int32_t slots);
  void Take(const Fit& fit);
  void Give(const Fit& fit);

  int32_t free(size_t agent) const { return free_[agent]; }

 private:
  std::optional<size_t> FindOne(int32_t slots, SchedulerConfig::Fitting policy) const;
  std::optional<Fit> FindGang(int32_t slots) const;
  void Unindex(size_t agent);
  void Index(size_t agent);

  std::vector<int32_t> free_, total_;
  std::vector<bool> schedulable_;
  std::vector<std::set<size_t>> by_free_;             // [n]: schedulable agents with n free slots
  std::map<int32_t, std::set<size_t>> idle_by_size_;  // size: schedulable agents all free
};

}  // namespace det::master::scheduler
