#include "master/cluster/scheduler/pending_demand.h"

#include <algorithm>
#include <map>

namespace det::master::scheduler {
namespace {

bool AnInstanceCouldRun(int32_t slots, int32_t slots_per_instance) {
  if (slots_per_instance == 0) return true;
  return slots <= slots_per_instance || slots % slots_per_instance == 0;
}

}  // namespace

PendingDemand CountPending(const PoolView& pool, int32_t slots_per_instance) {
  PendingDemand demand;
  std::map<size_t, int32_t> per_job;
  for (const RequestView& request : pool.requests) {
    if (!request.pending()) continue;
    if (request.slots == 0) {
      ++demand.aux_tasks;
      continue;
    }
    ++demand.tasks;
    demand.largest = std::max(demand.largest, request.slots);
    if (AnInstanceCouldRun(request.slots, slots_per_instance))
      per_job[request.job] += request.slots;
  }
  for (const auto& [job, slots] : per_job) {
    const auto& cap = pool.jobs[job].max_slots;
    demand.slots += cap ? std::min(slots, *cap) : slots;
  }
  return demand;
}

}  // namespace det::master::scheduler
