#pragma once

// The cluster's REST answers in Determined's shapes (bindings.py of Determined 0.38.1: camelCase
// fields, its enums, its timestamps as RFC 3339 text), with what only this master knows beside
// them under camelCase names of their own. `det --json` prints the catalog's own JSON forms
// (bus/catalog/*_json.h) instead, as Determined's CLI prints rows of its own.

#include <nlohmann/json.hpp>
#include <string>

#include "bus/catalog/jobs.h"
#include "bus/catalog/master.h"
#include "bus/catalog/tasks.h"

namespace det::master::http {

// Determined's default workspace and project (workspace_routes.h): every job and experiment is in
// them.
inline constexpr int64_t kDefaultWorkspaceId = 1;

// Determined's enum names: "TYPE_CPU" / "TYPE_CUDA" for a slot type ("cpu", "cuda").
std::string DeviceTypeName(const std::string& slot_type);
// Unix nanoseconds as RFC 3339 ("1970-..." for 0 stays as it is: Determined's zero time).
std::string TimeText(int64_t unix_ns);

// v1Agent: id, registeredTime, slots (by slot id: v1Slot with device and, when used, container),
// containers, resourcePools, addresses, enabled, draining, version, slotStats; and this master's
// state, hostname, usedSlots, utilization, lastHeardMsAgo, interruption.
nlohmann::ordered_json AgentJson(const bus::AgentSummary& agent);
// v1Slot of `slot` on `agent`.
nlohmann::ordered_json SlotJson(const bus::AgentSummary& agent, const bus::SlotInfo& slot);
// v1ResourcePool (every field Determined's clients require) with this master's provider,
// agents and usedSlots.
nlohmann::ordered_json ResourcePoolJson(const bus::ResourcePoolSummary& pool);
// v1Job (jobId, type TYPE_COMMAND..., submissionTime, summary {state STATE_QUEUED..., jobsAhead},
// ...) in the default workspace.
nlohmann::ordered_json JobJson(const bus::JobSummary& job);
// v1AllocationSummary of a placed task: taskId, allocationId, name, slotsNeeded, resources (one
// per agent, with its devices), resourcePool, priority, schedulerType.
nlohmann::ordered_json AllocationSummaryJson(const bus::TaskSummary& task);
// This master's task record in camelCase: id, type, state, resourcePool, slots, agents,
// entrypoint, exitCode, failureType, message, submittedAt, endedAt, priority, weight,
// preemptible, preempting, allocations, allocationId (and restarts, arrays when they apply).
nlohmann::ordered_json TaskJson(const bus::TaskSummary& task);

}  // namespace det::master::http
