#pragma once

#include "master/store.h"
#include "master/task_manager.h"

namespace det::master {

// The database change that records `task` in its current state: the task when it is queued, its
// allocation when placed, the allocation's state as it moves, and both ends when it terminates.
// Each op is idempotent (Store may retry it).
Store::Op PersistTaskChange(const Task& task);

// The task's spec as the JSON kept in tasks.config.
std::string TaskConfigJson(const TaskSpec& spec);

}  // namespace det::master
