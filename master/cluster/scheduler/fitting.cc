#include "master/cluster/scheduler/fitting.h"

#include <algorithm>

namespace det::master::scheduler {

FreeSlotIndex::FreeSlotIndex(const std::vector<AgentView>& agents) {
  int32_t largest = 0;
  for (const AgentView& agent : agents) {
    free_.push_back(std::max(0, agent.slots - agent.used));
    total_.push_back(std::max(0, agent.slots));
    schedulable_.push_back(agent.schedulable);
    largest = std::max(largest, agent.slots);
  }
  by_free_.resize(static_cast<size_t>(largest) + 1);
  for (size_t i = 0; i < free_.size(); ++i) Index(i);
}

void FreeSlotIndex::Index(size_t agent) {
  if (!schedulable_[agent]) return;
  by_free_[static_cast<size_t>(free_[agent])].insert(agent);
  if (total_[agent] > 0 && free_[agent] == total_[agent])
    idle_by_size_[total_[agent]].insert(agent);
}

void FreeSlotIndex::Unindex(size_t agent) {
  if (!schedulable_[agent]) return;
  by_free_[static_cast<size_t>(free_[agent])].erase(agent);
  if (total_[agent] > 0 && free_[agent] == total_[agent]) {
    auto size = idle_by_size_.find(total_[agent]);
    size->second.erase(agent);
    if (size->second.empty()) idle_by_size_.erase(size);
  }
}

void FreeSlotIndex::Take(size_t agent, int32_t slots) {
  Unindex(agent);
  free_[agent] = std::max(0, free_[agent] - slots);
  Index(agent);
}

void FreeSlotIndex::Give(size_t agent, int32_t slots) {
  Unindex(agent);
  free_[agent] = std::min(total_[agent], free_[agent] + slots);
  Index(agent);
}

void FreeSlotIndex::Take(const Fit& fit) {
  for (const auto& [agent, slots] : fit) Take(agent, slots);
}

void FreeSlotIndex::Give(const Fit& fit) {
  for (const auto& [agent, slots] : fit) Give(agent, slots);
}

std::optional<size_t> FreeSlotIndex::FindOne(int32_t slots, SchedulerConfig::Fitting policy) const {
  const auto largest = static_cast<int32_t>(by_free_.size()) - 1;
  if (slots > largest) return std::nullopt;
  if (policy == SchedulerConfig::Fitting::kBest) {
    for (int32_t n = slots; n <= largest; ++n) {
      if (!by_free_[static_cast<size_t>(n)].empty())
        return *by_free_[static_cast<size_t>(n)].begin();
    }
  } else {
    for (int32_t n = largest; n >= slots; --n) {
      if (!by_free_[static_cast<size_t>(n)].empty())
        return *by_free_[static_cast<size_t>(n)].begin();
    }
  }
  return std::nullopt;
}

std::optional<Fit> FreeSlotIndex::FindGang(int32_t slots) const {
  for (auto size = idle_by_size_.rbegin(); size != idle_by_size_.rend(); ++size) {
    const int32_t per_agent = size->first;
    if (per_agent >= slots || slots % per_agent != 0) continue;
    const auto needed = static_cast<size_t>(slots / per_agent);
    if (size->second.size() < needed) continue;
    Fit fit;
    for (auto agent = size->second.begin(); fit.size() < needed; ++agent) {
      fit.emplace_back(*agent, per_agent);
    }
    return fit;
  }
  return std::nullopt;
}

std::optional<Fit> FreeSlotIndex::Find(int32_t slots, SchedulerConfig::Fitting policy,
                                       bool single_node) const {
  if (slots <= 0) return std::nullopt;
  if (auto agent = FindOne(slots, policy)) return Fit{{*agent, slots}};
  if (single_node) return std::nullopt;
  return FindGang(slots);
}

}  // namespace det::master::scheduler
