#pragma once

#include "master/cluster/task_manager.h"
#include "master/records/store.h"

namespace det::master {

// The database change that records `task` in its current state: the task when it is queued (and
// the end of its previous allocation when it is queued again after a preemption), its allocation
// when placed (every agent of it), the allocation's state as it moves, and both ends when it
// terminates, as statements (sent in batches). Each is idempotent (Store may retry it).
Store::Statement PersistTaskChange(const Task& task);
// How that change reaches the disk: the task's queueing and its end durably (its submitter and its
// agent are told of them), the states between lazily (nothing is told of them, and a registering
// agent reports its workloads' states again).
Store::Commit TaskChangeCommit(const Task& task);
// What that change supersedes (Store::EnqueueStatement): the allocation's state, for the states
// after its placement and its end, each of which sets all the one before it did; "" otherwise.
std::string TaskChangeSupersedes(const Task& task);
// Records the task's current spec and job settings (after a job update).
Store::Op PersistTaskSettings(const Task& task);

// The task's spec and job settings as the JSON kept in tasks.config.
std::string TaskConfigJson(const Task& task);

}  // namespace det::master
