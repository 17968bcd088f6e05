#pragma once

#include <vector>

#include "master/cluster/task_manager.h"
#include "storage/database.h"

namespace det::master {

// The tasks a previous master left unfinished, as they were: queued ones with their spec, placed
// ones with their allocation, agents, slots and last recorded state, and how many allocations
// each has had. Read once at start.
Result<std::vector<Task>> LoadOpenTasks(storage::Database& database);

// The inverse of TaskConfigJson (the job id, when asked for, into `job_id`); InvalidArgument
// naming the field when the JSON is not a spec.
Result<TaskSpec> ParseTaskConfigJson(const std::string& json, std::string* job_id = nullptr,
                                     int32_t* restarts = nullptr);

}  // namespace det::master
