#include "master/cluster/scheduler/fair_share_scheduler.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <numeric>
#include <tuple>

#include "master/cluster/scheduler/fitting.h"
#include "master/cluster/scheduler/queue_order.h"

namespace det::master::scheduler {
namespace {

constexpr int kMaxRedistributions = 64;  // rounds that leave out one stuck job each

// What one job wants and holds in the pool.
struct Group {
  int32_t demand = 0;  // slots its requests ask for, capped at max_slots
  int32_t active = 0;  // slots its placed requests hold (not counting those being preempted)
  int32_t smallest = INT32_MAX;  // its smallest pending request
};

int32_t Capacity(const PoolView& pool) {
  int32_t capacity = 0;
  for (const AgentView& agent : pool.agents) capacity += agent.schedulable ? agent.slots : 0;
  return capacity;
}

std::vector<Group> Groups(const PoolView& pool, int32_t capacity) {
  std::vector<Group> groups(pool.jobs.size());
  for (const RequestView& request : pool.requests) {
    if (request.slots == 0 || request.slots > capacity || request.preempting) continue;
    Group& group = groups[request.job];
    group.demand += request.slots;
    if (request.pending()) {
      group.smallest = std::min(group.smallest, request.slots);
    } else {
      group.active += request.slots;
    }
  }
  for (size_t j = 0; j < groups.size(); ++j) {
    if (pool.jobs[j].max_slots)
      groups[j].demand = std::min(groups[j].demand, *pool.jobs[j].max_slots);
  }
  return groups;
}

// Water filling: each round gives every unsatisfied job its weighted part of what is left (at
// least one slot), smallest demand first, until the slots or the demand run out.
std::vector<int32_t> Pour(const PoolView& pool, const std::vector<Group>& groups,
                          const std::vector<bool>& left_out, int32_t capacity) {
  std::vector<int32_t> offers(groups.size(), 0);
  std::vector<size_t> open;
  for (size_t j = 0; j < groups.size(); ++j) {
    if (groups[j].demand > 0 && !left_out[j]) open.push_back(j);
  }
  std::sort(open.begin(), open.end(), [&](size_t a, size_t b) {
    return std::tuple(groups[a].demand, pool.jobs[a].position, a) <
           std::tuple(groups[b].demand, pool.jobs[b].position, b);
  });
  int32_t remaining = capacity;
  while (remaining > 0 && !open.empty()) {
    double weights = 0;
    for (size_t j : open) weights += std::max(pool.jobs[j].weight, 0.0);
    const int32_t round = remaining;
    std::vector<size_t> still_open;
    for (size_t j : open) {
      const double part = weights > 0 ? round * std::max(pool.jobs[j].weight, 0.0) / weights : 0;
      const int32_t give = std::min({std::max<int32_t>(1, static_cast<int32_t>(std::floor(part))),
                                     remaining, groups[j].demand - offers[j]});
      offers[j] += give;
      remaining -= give;
      if (offers[j] < groups[j].demand) still_open.push_back(j);
      if (remaining == 0) break;
    }
    open.swap(still_open);
  }
  return offers;
}

// The jobs that run nothing and whose share cannot start their smallest request, newest first.
std::vector<size_t> Stuck(const PoolView& pool, const std::vector<Group>& groups,
                          const std::vector<int32_t>& offers, const std::vector<bool>& left_out) {
  std::vector<size_t> stuck;
  for (size_t j = 0; j < groups.size(); ++j) {
    const Group& group = groups[j];
    if (left_out[j] || group.active > 0 || group.smallest == INT32_MAX) continue;
    if (offers[j] >= group.smallest || offers[j] == 0) continue;
    stuck.push_back(j);
  }
  std::sort(stuck.begin(), stuck.end(), [&](size_t a, size_t b) {
    return std::tuple(pool.jobs[a].position, a) > std::tuple(pool.jobs[b].position, b);
  });
  return stuck;
}

// Shares of `groups` (Groups()): water filling, then stuck jobs left out one at a time (the
// newest first) and the rest shared again; after kMaxRedistributions rounds, all but the oldest
// at once.
std::vector<int32_t> Shares(const PoolView& pool, const std::vector<Group>& groups,
                            int32_t capacity) {
  std::vector<bool> left_out(groups.size(), false);
  std::vector<int32_t> offers = Pour(pool, groups, left_out, capacity);
  for (int round = 0;; ++round) {
    const std::vector<size_t> stuck = Stuck(pool, groups, offers, left_out);
    if (stuck.empty()) return offers;
    // The newest one; past the cap, all but the oldest (the one that would be left in the end).
    const size_t count = round < kMaxRedistributions ? 1 : std::max<size_t>(stuck.size() - 1, 1);
    for (size_t i = 0; i < count; ++i) left_out[stuck[i]] = true;
    offers = Pour(pool, groups, left_out, capacity);
  }
}

}  // namespace

std::vector<int32_t> FairShares(const PoolView& pool) {
  const int32_t capacity = Capacity(pool);
  return Shares(pool, Groups(pool, capacity), capacity);
}

Decisions ScheduleFairShare(const PoolView& pool, const SchedulerConfig& config) {
  Decisions decisions;
  PlaceAuxRequests(pool, &decisions);
  const int32_t capacity = Capacity(pool);
  const std::vector<Group> groups = Groups(pool, capacity);
  const std::vector<int32_t> shares = Shares(pool, groups, capacity);
  std::vector<int32_t> held(groups.size());
  for (size_t j = 0; j < groups.size(); ++j) held[j] = groups[j].active;

  // Above their share: give back preemptible work, newest first.
  std::vector<size_t> running;
  for (size_t i = 0; i < pool.requests.size(); ++i) {
    const RequestView& request = pool.requests[i];
    if (!request.pending() && !request.preempting && request.preemptible && request.slots > 0) {
      running.push_back(i);
    }
  }
  std::sort(running.begin(), running.end(), [&](size_t a, size_t b) {
    return std::tuple(-pool.requests[a].submitted_ns, a) <
           std::tuple(-pool.requests[b].submitted_ns, b);
  });
  for (size_t i : running) {
    const RequestView& request = pool.requests[i];
    if (held[request.job] <= shares[request.job]) continue;
    held[request.job] -= request.slots;
    decisions.preemptions.push_back(i);
  }

  // Below their share: place what fits the share and the agents.
  FreeSlotIndex free(pool.agents);
  for (size_t i : PendingSlotRequests(pool)) {
    const RequestView& request = pool.requests[i];
    if (held[request.job] + request.slots > shares[request.job]) continue;
    auto fit = free.Find(request.slots, config.fitting, request.single_node);
    if (!fit) continue;
    free.Take(*fit);
    held[request.job] += request.slots;
    decisions.placements.push_back({i, std::move(*fit), false});
  }
  return decisions;
}

}  // namespace det::master::scheduler
