#pragma once

#include <vector>

#include "master/cluster/scheduler/scheduler_types.h"

namespace det::master::scheduler {

// The pending requests that need slots, most urgent first: by job priority (1 first), then job
// position, then submission time, then request index (so every order is total and repeatable).
std::vector<size_t> PendingSlotRequests(const PoolView& pool);

// Places pending zero-slot (aux) requests, in the same order, each on the schedulable agent
// running the fewest aux tasks (the earlier agent on ties), at most `max_aux_per_agent` each.
// They never wait behind, or hold up, requests for slots.
void PlaceAuxRequests(const PoolView& pool, Decisions* decisions);

}  // namespace det::master::scheduler
