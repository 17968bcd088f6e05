#pragma once

#include <cstdint>

#include "master/cluster/scheduler/scheduler_types.h"

namespace det::master::scheduler {

struct PendingDemand {
  int32_t slots = 0;      // what the autoscaler should find room for (see CountPending)
  int32_t aux_tasks = 0;  // zero-slot tasks waiting
  int32_t tasks = 0;      // pending tasks that need slots, all of them
  int32_t largest = 0;    // slots of the largest of those
  bool operator==(const PendingDemand&) const = default;
};

// The demand of a pool's pending requests, by Determined's rule: a request counts only if an
// instance could run it (`slots_per_instance` > 0 and it asks for at most that, or a multiple of
// it); slots are summed per job and each job's sum capped at its max_slots. A pool without a
// provider (`slots_per_instance` 0) counts every request.
PendingDemand CountPending(const PoolView& pool, int32_t slots_per_instance);

}  // namespace det::master::scheduler
