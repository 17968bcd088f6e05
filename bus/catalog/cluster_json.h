#pragma once

#include <nlohmann/json.hpp>

#include "bus/catalog/autoscaler.h"
#include "bus/catalog/jobs.h"
#include "bus/catalog/master.h"
#include "bus/catalog/tasks.h"

namespace det::bus {

// The JSON forms of agents, tasks, jobs and log lines that `det --json` prints and the REST API
// answers.
nlohmann::ordered_json ToJson(const AgentSummary& agent);
nlohmann::ordered_json ToJson(const TaskSummary& task);
nlohmann::ordered_json ToJson(const JobSummary& job);
nlohmann::ordered_json ToJson(const TaskLogLine& line);
nlohmann::ordered_json ToJson(const MasterInfo& info);
nlohmann::ordered_json ToJson(const MasterLogLine& line);
nlohmann::ordered_json ToJson(const ResourcePoolSummary& pool);
nlohmann::ordered_json ToJson(const InstanceInfo& instance);
nlohmann::ordered_json ToJson(const ScalingDecisionEvent& decision);

}  // namespace det::bus
