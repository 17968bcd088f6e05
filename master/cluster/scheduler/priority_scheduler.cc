#include "master/cluster/scheduler/priority_scheduler.h"

#include <algorithm>
#include <optional>
#include <set>
#include <tuple>

#include "master/cluster/scheduler/fitting.h"
#include "master/cluster/scheduler/queue_order.h"

namespace det::master::scheduler {
namespace {

// The pool as it will be once preemptions finish, for requests that cannot be placed now.
class LookAhead {
 public:
  LookAhead(const PoolView& pool, const FreeSlotIndex& now) : pool_(pool), future_(now) {
    for (size_t i = 0; i < pool.requests.size(); ++i) {
      const RequestView& request = pool.requests[i];
      if (request.pending()) continue;
      if (request.preempting) {
        future_.Give(request.placed);
      } else if (request.preemptible) {
        candidates_.push_back(i);
      }
    }
    // Least urgent first, then newest first.
    auto key = [&](size_t i) {
      const RequestView& request = pool.requests[i];
      const JobView& job = pool.jobs[request.job];
      return std::tuple(-job.priority, -job.position, -request.submitted_ns, i);
    };
    std::sort(candidates_.begin(), candidates_.end(),
              [&](size_t a, size_t b) { return key(a) < key(b); });
  }

  // A placement made now takes the same slots later.
  void Placed(const Fit& fit) { future_.Take(fit); }
  // Whether `fit` leaves alone the room reserved for blocked requests.
  bool Allows(const Fit& fit) const {
    return std::all_of(fit.begin(), fit.end(),
                       [&](const auto& part) { return future_.free(part.first) >= part.second; });
  }

  // Reserves room for `request`, preempting what must go; the preempted are
  // appended to `preempted`.
  void MakeRoom(const RequestView& request, SchedulerConfig::Fitting fitting,
                std::vector<size_t>* preempted) {
    if (auto fit = future_.Find(request.slots, fitting, request.single_node)) {
      future_.Take(*fit);  // what is already being freed is enough
      return;
    }
    std::vector<size_t> added;
    std::optional<Fit> fit;
    for (size_t candidate : candidates_) {
      if (!LessUrgent(pool_.requests[candidate], request)) break;
      if (taken_.count(candidate)) continue;
      future_.Give(pool_.requests[candidate].placed);
      added.push_back(candidate);
      if ((fit = future_.Find(request.slots, fitting, request.single_node))) break;
    }
    std::set<size_t> fit_agents;
    if (fit) {
      for (const auto& [agent, slots] : *fit) fit_agents.insert(agent);
    }
    for (size_t candidate : added) {
      const Fit& placed = pool_.requests[candidate].placed;
      const bool needed = std::any_of(placed.begin(), placed.end(), [&](const auto& part) {
        return fit_agents.count(part.first);
      });
      if (needed) {
        preempted->push_back(candidate);
        taken_.insert(candidate);
      } else {
        future_.Take(placed);  // not preempted after all: its slots stay taken
      }
    }
    if (fit) future_.Take(*fit);
  }

 private:
  // Whether `running` may make way for `waiting`: it is of a less urgent priority, or of the same
  // one and behind it in the queue.
  bool LessUrgent(const RequestView& running, const RequestView& waiting) const {
    const JobView& a = pool_.jobs[running.job];
    const JobView& b = pool_.jobs[waiting.job];
    return a.priority > b.priority || (a.priority == b.priority && a.position > b.position);
  }

  const PoolView& pool_;
  FreeSlotIndex future_;
  std::vector<size_t> candidates_;  // running preemptible requests, least urgent newest first
  std::set<size_t> taken_;          // chosen for preemption in this pass
};

// Slots each job holds now (index: PoolView::jobs).
std::vector<int64_t> HeldSlots(const PoolView& pool) {
  std::vector<int64_t> held(pool.jobs.size(), 0);
  for (const RequestView& request : pool.requests) {
    for (const auto& [agent, slots] : request.placed) held[request.job] += slots;
  }
  return held;
}

}  // namespace

Decisions SchedulePriority(const PoolView& pool, const SchedulerConfig& config) {
  Decisions decisions;
  PlaceAuxRequests(pool, &decisions);
  FreeSlotIndex free(pool.agents);
  std::optional<LookAhead> look_ahead;
  std::optional<int> blocked_priority;  // the most urgent priority with a request left waiting
  std::vector<int64_t> held = HeldSlots(pool);
  for (size_t index : PendingSlotRequests(pool)) {
    const RequestView& request = pool.requests[index];
    const JobView& job = pool.jobs[request.job];
    // A job at its max_slots waits for its own tasks, not for others: it blocks no one.
    if (job.max_slots && held[request.job] + request.slots > *job.max_slots) continue;
    const int priority = job.priority;
    if (blocked_priority && priority > *blocked_priority) {
      if (!config.preemption) break;       // nothing less urgent goes past a blocked request
      if (!request.preemptible) continue;  // only what can be taken back again
    }
    auto fit = free.Find(request.slots, config.fitting, request.single_node);
    if (fit && (!look_ahead || look_ahead->Allows(*fit))) {
      free.Take(*fit);
      held[request.job] += request.slots;
      if (look_ahead) look_ahead->Placed(*fit);
      decisions.placements.push_back({index, std::move(*fit), blocked_priority.has_value()});
      continue;
    }
    if (!blocked_priority) blocked_priority = priority;
    if (!config.preemption) continue;
    if (!look_ahead) look_ahead.emplace(pool, free);
    look_ahead->MakeRoom(request, config.fitting, &decisions.preemptions);
  }
  return decisions;
}

}  // namespace det::master::scheduler
