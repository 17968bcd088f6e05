#pragma once

#include <string>
#include <utility>
#include <vector>

#include "master/cluster/scheduler/scheduler_types.h"

namespace det::testing {

// Builds a scheduler::PoolView in a few readable lines, and renders decisions as text:
//   "t1>a" (t1 placed on agent a), "t1>a+b" (a gang over a and b), "t1>a*" (backfilled),
//   "-t3" (t3 preempted).
// Each job gets one task unless tasks are added to it by name.
class PoolBuilder {
 public:
  using View = master::scheduler::PoolView;

  PoolBuilder& Agent(const std::string& id, int32_t slots, int32_t used = 0) {
    pool_.agents.push_back({id, slots, used, 0, true});
    return *this;
  }
  PoolBuilder& Unschedulable(const std::string& id, int32_t slots) {
    pool_.agents.push_back({id, slots, 0, 0, false});
    return *this;
  }
  // A job of `priority` whose single task `task` waits for `slots`.
  PoolBuilder& Pending(const std::string& task, int32_t slots, int priority = 42) {
    Add(task, slots, priority, {}, false);
    return *this;
  }
  PoolBuilder& PendingGang(const std::string& task, int32_t slots, bool single_node) {
    Add(task, slots, 42, {}, false).single_node = single_node;
    return *this;
  }
  // A job of `priority` whose task `task` runs on `agent` with `slots` (taking them).
  PoolBuilder& Running(const std::string& task, const std::string& agent, int32_t slots,
                       int priority = 42, bool preemptible = true) {
    const size_t a = AgentIndex(agent);
    pool_.agents[a].used += slots;
    Add(task, slots, priority, {{a, slots}}, preemptible);
    return *this;
  }
  PoolBuilder& Preempting(const std::string& task, const std::string& agent, int32_t slots,
                          int priority = 42) {
    Running(task, agent, slots, priority);
    pool_.requests.back().preempting = true;
    return *this;
  }
  // Settings of the last job added.
  PoolBuilder& Weight(double weight) {
    pool_.jobs.back().weight = weight;
    return *this;
  }
  PoolBuilder& MaxSlots(int32_t max) {
    pool_.jobs.back().max_slots = max;
    return *this;
  }
  // The last request may be preempted.
  PoolBuilder& Preemptible() {
    pool_.requests.back().preemptible = true;
    return *this;
  }
  // Another task of the last job.
  PoolBuilder& AlsoPending(const std::string& task, int32_t slots) {
    pool_.requests.push_back({task, pool_.jobs.size() - 1, slots, false, false, Next(), {}, false});
    return *this;
  }
  PoolBuilder& AlsoRunning(const std::string& task, const std::string& agent, int32_t slots) {
    const size_t a = AgentIndex(agent);
    pool_.agents[a].used += slots;
    pool_.requests.push_back(
        {task, pool_.jobs.size() - 1, slots, true, false, Next(), {{a, slots}}, false});
    return *this;
  }

  const View& view() const { return pool_; }

  std::string Render(const master::scheduler::Decisions& decisions) const {
    std::string text;
    for (const auto& placement : decisions.placements) {
      if (!text.empty()) text += " ";
      text += pool_.requests[placement.request].task_id + ">";
      for (size_t i = 0; i < placement.agents.size(); ++i) {
        text += (i ? "+" : "") + pool_.agents[placement.agents[i].first].id;
      }
      if (placement.backfilled) text += "*";
    }
    for (size_t preempted : decisions.preemptions) {
      if (!text.empty()) text += " ";
      text += "-" + pool_.requests[preempted].task_id;
    }
    return text;
  }

 private:
  size_t AgentIndex(const std::string& id) const {
    for (size_t i = 0; i < pool_.agents.size(); ++i) {
      if (pool_.agents[i].id == id) return i;
    }
    return 0;
  }
  int64_t Next() { return ++clock_; }
  master::scheduler::RequestView& Add(const std::string& task, int32_t slots, int priority,
                                      std::vector<std::pair<size_t, int32_t>> placed,
                                      bool preemptible) {
    const int64_t now = Next();
    pool_.jobs.push_back({"job-" + task, priority, 1.0, std::nullopt, now});
    pool_.requests.push_back(
        {task, pool_.jobs.size() - 1, slots, preemptible, false, now, std::move(placed), false});
    return pool_.requests.back();
  }

  View pool_;
  int64_t clock_ = 0;
};

}  // namespace det::testing
