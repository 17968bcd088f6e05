#pragma once

#include "master/front/answer_cache.h"
#include "master/front/front_door.h"
#include "master/front/http/router.h"

namespace det::master::http {

// The user REST API for the cluster: agents and slots, resource pools, the job queue, commands
// and tasks with their logs, answering what the same `det` commands answer (the JSON of `det
// --json`). Every route needs a user's token (user_routes.h); enabling and disabling agents and
// slots needs an admin.
//
//   GET   /api/v1/agents                            {"agents": [...]}
//   GET   /api/v1/agents/{id}                       {"agent": {...}}
//   GET   /api/v1/agents/{id}/slots                 {"slots": [...]} with "enabled" per slot
//   POST  /api/v1/agents/{id}/enable                {"agent"}
//   POST  /api/v1/agents/{id}/disable               {"drain": bool} -> {"agent"}
//   POST  /api/v1/agents/{id}/slots/{slot}/enable|disable   {"agent"}
//   GET   /api/v1/resource-pools                    {"resource_pools": [...]}
//   GET   /api/v1/job-queues[?resource_pool=P]      {"jobs": [...]} in queue order
//   PATCH /api/v1/job-queues/{job id}               {"priority", "weight", "resource_pool"} ->
//                                                   {"job"}
//   POST  /api/v1/commands                          {"entrypoint": [...] or "shell text", "slots",
//                                                   "resource_pool", "env", "priority",
//                                                   "weight", "preemptible"} -> {"task_id"}
//   GET   /api/v1/tasks                             {"tasks": [...]}
//   GET   /api/v1/tasks/{id}                        {"task": {...}}
//   POST  /api/v1/tasks/{id}/kill                   {"state"}
//   GET   /api/v1/tasks/{id}/logs[?after_id=N&limit=N]   {"logs": [...], "task_ended"}
//   GET   /api/v1/tasks/{id}/logs?follow=true       application/x-ndjson, one line per log line,
//                                                   until the task ended and every line was sent
//                                                   (an access token for the scraper)
// `cache` (may be null: every answer live) answers the polled lists; CacheClusterAnswers adds
// their entries to it.
void RouteClusterApi(Router& routes, FrontDoor& front, AnswerCache* cache);
void CacheClusterAnswers(AnswerCache& cache, FrontDoor& front);

// The request bodies of those routes as their handlers read them (exposed for tests and the
// fuzzer): InvalidArgument naming the field that is missing, of the wrong type or out of range,
// or saying the body is not a JSON object. `job_id` and `agent_id` are the path's. Never throw.
//
// POST /api/v1/commands: the entrypoint and the command's environment and resources, with an
// experiment's names and checks (image, force_pull_image, registry_auth, shm_size).
Result<bus::CommandRunRequest> CommandRunRequestOf(const std::string& body);
// PATCH /api/v1/job-queues/{job id}; InvalidArgument too when it changes nothing.
Result<bus::JobUpdateRequest> JobUpdateRequestOf(const std::string& job_id,
                                                 const std::string& body);
// POST /api/v1/agents/{id}/enable|disable: only disable reads a body, {"drain": bool}, which may
// be empty.
Result<bus::AgentEnableRequest> AgentEnableRequestOf(const std::string& agent_id, bool enable,
                                                     const std::string& body);

}  // namespace det::master::http
