#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace det::master::scheduler {

// `resource_manager.scheduler` (or a pool's own `scheduler`) in master.yaml, Determined's names
// and defaults.
struct SchedulerConfig {
  enum class Type { kPriority, kFairShare };
  enum class Fitting { kBest, kWorst };
  Type type = Type::kPriority;       // `type: priority|fair_share`
  Fitting fitting = Fitting::kBest;  // `fitting_policy: best|worst`
  bool preemption = false;           // `preemption` (priority: free room for more urgent work;
                                     // fair share: take back slots from jobs over their share)
  int default_priority = 42;         // `default_priority`, 1 (most urgent) .. 99
};

inline constexpr int kMinPriority = 1;   // most urgent
inline constexpr int kMaxPriority = 99;  // least urgent

// An agent of the pool as a scheduling pass sees it.
struct AgentView {
  std::string id;
  int32_t slots = 0;        // slots that can take work (enabled ones)
  int32_t used = 0;         // of those, taken by allocations (including ones being preempted)
  int32_t aux = 0;          // zero-slot tasks it runs
  bool schedulable = true;  // connected, enabled and not draining: takes new work
};

// A job: what a user submitted (an experiment, a command). Its tasks share its priority, weight,
// slot cap and place in the queue.
struct JobView {
  std::string id;
  int priority = 42;
  double weight = 1.0;
  std::optional<int32_t> max_slots;  // at most this many slots at once (fair share and demand)
  int64_t position = 0;              // queue order: lower first (submission order by default)
};

// One task's request for slots: pending (no placement yet) or holding a placement.
struct RequestView {
  std::string task_id;
  size_t job = 0;  // index into PoolView::jobs
  int32_t slots = 1;
  bool preemptible = false;
  bool single_node = false;  // `is_single_node`: never spread over agents
  int64_t submitted_ns = 0;  // ties within a job position; newest is preempted first
  // Where it runs (agent index, slots there); empty while pending.
  std::vector<std::pair<size_t, int32_t>> placed;
  bool preempting = false;  // asked to stop for more urgent work; its slots free up soon
  bool pending() const { return placed.empty(); }
};

// Everything one pass over one pool needs. Agents are in a deterministic order (by id); ties in
// fitting go to the earlier agent.
struct PoolView {
  std::vector<AgentView> agents;
  std::vector<JobView> jobs;
  std::vector<RequestView> requests;
  int32_t max_aux_per_agent = 100;  // `max_aux_containers_per_agent`
};

// Where a pending request goes: (agent index, slots) per agent; one entry unless a gang fit.
struct Placement {
  size_t request = 0;  // index into PoolView::requests
  std::vector<std::pair<size_t, int32_t>> agents;
  bool backfilled = false;  // placed past a request ahead of it that could not be
};

// What a pass decided. The caller places, and asks the preempted to stop (gracefully).
struct Decisions {
  std::vector<Placement> placements;
  std::vector<size_t> preemptions;  // request indices
};

}  // namespace det::master::scheduler
