// Scheduling pass benchmark: one pass of the priority (and fair-share) scheduler over a pool of
// 8-slot agents with a long queue, timed in process. Baseline, measured in the same run: the least
// any pass does, sorting the queue's keys and handing out free slots with a moving cursor (no
// fitting policy, no gangs, no rules). Figures are the best of three passes; never asserted.
//
//   scheduler_bench           5,000 agents x 8 slots, 100,000 queued tasks, and the growth
//                             with agents and with queue length
//   scheduler_bench --short   500 agents, 10,000 tasks (CI)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "master/cluster/scheduler/fair_share_scheduler.h"
#include "master/cluster/scheduler/priority_scheduler.h"

namespace {

using namespace det::master::scheduler;
using SteadyClock = std::chrono::steady_clock;

constexpr int32_t kSlotsPerAgent = 8;

struct Shape {
  int agents;
  int tasks;
  int gang_percent;   // share of tasks that ask for a whole agent (8 slots)
  bool full = false;  // every slot already taken: nothing can be placed
};

PoolView MakePool(const Shape& shape) {
  PoolView pool;
  for (int i = 0; i < shape.agents; ++i) {
    char id[32];
    std::snprintf(id, sizeof id, "agent-%05d", i);
    pool.agents.push_back({id, kSlotsPerAgent, shape.full ? kSlotsPerAgent : 0, 0, true});
  }
  for (int i = 0; i < shape.tasks; ++i) {
    const bool gang = shape.gang_percent > 0 && i % (100 / shape.gang_percent) == 0;
    pool.jobs.push_back({"job-" + std::to_string(i), 42, 1.0, std::nullopt, i});
    pool.requests.push_back({"task-" + std::to_string(i),
                             static_cast<size_t>(i),
                             gang ? kSlotsPerAgent : 1,
                             true,
                             false,
                             i,
                             {},
                             false});
  }
  return pool;
}

// Best of three: (seconds, placements).
std::pair<double, size_t> Time(const std::function<size_t()>& pass) {
  double best = 1e9;
  size_t placed = 0;
  for (int round = 0; round < 3; ++round) {
    const auto start = SteadyClock::now();
    placed = pass();
    best = std::min(best, std::chrono::duration<double>(SteadyClock::now() - start).count());
  }
  return {best, placed};
}

// The floor: sort the queue's keys, then give each task the next free slots in agent order.
size_t Baseline(const PoolView& pool) {
  std::vector<std::tuple<int, int64_t, int64_t, size_t>> keys;
  keys.reserve(pool.requests.size());
  for (size_t i = 0; i < pool.requests.size(); ++i) {
    const JobView& job = pool.jobs[pool.requests[i].job];
    keys.emplace_back(job.priority, job.position, pool.requests[i].submitted_ns, i);
  }
  std::sort(keys.begin(), keys.end());
  std::vector<int32_t> free;
  for (const AgentView& agent : pool.agents) free.push_back(agent.slots - agent.used);
  size_t cursor = 0, placed = 0;
  for (const auto& key : keys) {
    const int32_t slots = pool.requests[std::get<3>(key)].slots;
    while (cursor < free.size() && free[cursor] < slots) ++cursor;
    if (cursor == free.size()) break;
    free[cursor] -= slots;
    ++placed;
  }
  return placed;
}

void Row(const char* label, const Shape& shape, SchedulerConfig::Type type) {
  const PoolView pool = MakePool(shape);
  SchedulerConfig config;
  config.type = type;
  auto [seconds, placed] = Time([&] {
    const Decisions decisions = type == SchedulerConfig::Type::kPriority
                                    ? SchedulePriority(pool, config)
                                    : ScheduleFairShare(pool, config);
    return decisions.placements.size();
  });
  auto [base_seconds, base_placed] = Time([&] { return Baseline(pool); });
  std::printf("  %-34s %6d %7d %8zu %9.1f %12.0f   %8.1f %12.0f\n", label, shape.agents,
              shape.tasks, placed, seconds * 1e3, placed / seconds, base_seconds * 1e3,
              base_placed / base_seconds);
}

}  // namespace

int main(int argc, char** argv) {
  const bool short_mode = argc > 1 && std::strcmp(argv[1], "--short") == 0;
  const int agents = short_mode ? 500 : 5000, tasks = short_mode ? 10000 : 100000;
  using Type = SchedulerConfig::Type;
  std::printf("scheduling pass: agents x %d slots, queued tasks (best of 3)\n", kSlotsPerAgent);
  std::printf("  %-34s %6s %7s %8s %9s %12s   %8s %12s\n", "", "agents", "queued", "placed",
              "pass ms", "placed/s", "base ms", "base placed/s");
  Row("priority, 1-slot tasks", {agents, tasks, 0}, Type::kPriority);
  Row("priority, 10% 8-slot tasks", {agents, tasks, 10}, Type::kPriority);
  Row("priority, full pool (nothing fits)", {agents, tasks, 0, true}, Type::kPriority);
  Row("fair share, 1-slot tasks", {agents, tasks, 0}, Type::kFairShare);
  std::printf("growth with agents (priority, %d queued):\n", tasks);
  for (int n : {agents / 4, agents / 2, agents}) Row("", {n, tasks, 0}, Type::kPriority);
  std::printf("growth with queue length (priority, %d agents):\n", agents);
  for (int n : {tasks / 4, tasks / 2, tasks}) Row("", {agents, n, 0}, Type::kPriority);
  return 0;
}
