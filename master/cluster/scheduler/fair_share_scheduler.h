#pragma once

#include <cstdint>
#include <vector>

#include "master/cluster/scheduler/scheduler_types.h"

namespace det::master::scheduler {

// Each job's share of a pool's schedulable slots (Determined's fair share): the pool's slots are
// poured into the jobs by weight, no job getting more than its demand (the slots its requests
// ask for, at most `max_slots`), and what a job cannot use flows to the others (water filling).
// Requests larger than the pool are left out. When a job's share is smaller than its smallest
// waiting request and it runs nothing, the newest such job is left out and the others share
// again, so that slots are not held for work that cannot start.
std::vector<int32_t> FairShares(const PoolView& pool);

// One pass of the fair-share scheduler over one pool. Jobs below their share get their pending
// requests placed (submission order, while they fit the share and the agents); jobs above it give
// back preemptible work, newest first, until they are within it: fair share always preempts, as
// Determined's does, gracefully. Zero-slot requests are placed on their own (PlaceAuxRequests).
Decisions ScheduleFairShare(const PoolView& pool, const SchedulerConfig& config);

}  // namespace det::master::scheduler
