#pragma once

#include "master/front/answer_cache.h"
#include "master/front/front_door.h"
#include "master/front/http/router.h"

namespace det::master::http {

// The user REST API for the cluster, in Determined's shapes (cluster_shapes.h): agents and
// slots, resource pools, the job queue, tasks with their logs (commands: command_routes.h).
// Every route needs a user's token (user_routes.h); enabling and disabling agents and slots
// needs an admin.
//
//   GET   /api/v1/agents                            {"agents": [v1Agent], "pagination"}
//   GET   /api/v1/agents/{id}                       {"agent"}
//   GET   /api/v1/agents/{id}/slots                 {"slots": [v1Slot]}
//   POST  /api/v1/agents/{id}/enable                {"agent"}
//   POST  /api/v1/agents/{id}/disable               {"drain": bool} -> {"agent"}
//   POST  /api/v1/agents/{id}/slots/{slot}/enable|disable   {"slot"}
//   GET   /api/v1/resource-pools                    {"resourcePools": [...], "pagination"}
//   GET   /api/v1/job-queues[?resourcePool=P]       {"jobs": [v1Job], "pagination"} in queue order
//   GET   /api/v1/job-queues-v2[?resourcePool=P]    {"jobs": [{"full": v1Job}], "pagination"}
//   PATCH /api/v1/job-queues/{job id}               {"priority", "weight", "resourcePool"} ->
//                                                   {"job"}
//   GET   /api/v1/tasks                             {"allocationIdToSummary", "tasks"}
//   GET   /api/v1/tasks/{id}                        {"task": {...}}
//   POST  /api/v1/tasks/{id}/kill                   {"state"}
//   GET   /api/v1/tasks/{id}/logs                   Determined's TaskLogs stream
//                                                   (task_log_stream.h)
// `cache` (may be null: every answer live) answers the polled lists; CacheClusterAnswers adds
// their entries to it.
void RouteClusterApi(Router& routes, FrontDoor& front, AnswerCache* cache);
void CacheClusterAnswers(AnswerCache& cache, FrontDoor& front);

// The request bodies of those routes as their handlers read them (exposed for tests and the
// fuzzer): InvalidArgument naming the field that is missing, of the wrong type or out of range,
// or saying the body is not a JSON object. `agent_id` is the path's. Never throw.
//
// POST /api/v1/job-queues, Determined's UpdateJobQueue: {"updates": [{"jobId", "priority",
// "weight", "resourcePool"}]} (at most 1,000); InvalidArgument too for an update that changes
// nothing, or that moves a job ahead of or behind another (aheadOf, behindOf: this master's
// queue orders by priority and submission).
Result<std::vector<bus::JobUpdateRequest>> JobQueueUpdatesOf(const std::string& body);
// POST /api/v1/agents/{id}/enable|disable: only disable reads a body, {"drain": bool}, which may
// be empty.
Result<bus::AgentEnableRequest> AgentEnableRequestOf(const std::string& agent_id, bool enable,
                                                     const std::string& body);

}  // namespace det::master::http
