#pragma once

#include "master/cluster/scheduler/scheduler_types.h"

namespace det::master::scheduler {

// One pass of the priority scheduler over one pool.
//
// Pending requests are taken most urgent first (PendingSlotRequests). Each goes to a fit
// (fitting.h). When one cannot be placed, the others of its priority may still be placed past it
// (marked backfilled). Without `preemption` nothing less urgent is placed in this pass; with it,
// less urgent requests that are preemptible may be (they can be taken back).
//
// With `preemption`, a request that cannot be placed looks ahead to the room it would have once
// the preemptions under way finish; if that is enough, it waits for them (no new preemption).
// Otherwise preemptible allocations that may make way for it (a less urgent priority, or the same
// one and behind it in the queue) are added, least urgent and newest first, until it would fit,
// and those on the agents of that fit are preempted. That room is reserved for it: requests after
// it are placed only where they leave it alone. Nothing is preempted when even all candidates
// would not make room.
//
// Zero-slot requests are placed on their own (PlaceAuxRequests).
Decisions SchedulePriority(const PoolView& pool, const SchedulerConfig& config);

}  // namespace det::master::scheduler
