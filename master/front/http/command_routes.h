#pragma once

#include "master/front/front_door.h"
#include "master/front/http/router.h"

namespace det::master::http {

// Commands as Determined's API has them (its CLI's `det cmd run|list|kill`, its SDK):
//
//   POST /api/v1/commands              {"config": Determined's command config} ->
//                                      {"command": v1Command, "config", "warnings"}
//   GET  /api/v1/commands[?users=NAME]  {"commands": [v1Command], "pagination"}
//   GET  /api/v1/commands/{id}         {"command", "config"}
//   POST /api/v1/commands/{id}/kill    {"command"}
//
// A v1Command: id (a UUID, as Determined's CLI requires), description, state (STATE_QUEUED ...
// STATE_TERMINATED), username, workspaceId 1, resourcePool, startTime, exitStatus, jobId. Users'
// tokens; anyone may read and kill them, as in Determined's basic rules.
void RouteCommandApi(Router& routes, FrontDoor& front);

// The body of POST /api/v1/commands as its handler reads it (exposed for tests and the fuzzer):
// Determined's command config under "config": entrypoint (a list of strings, or shell text),
// description, resources (slots, resource_pool, priority, weight, shm_size, max_slots,
// is_single_node), environment (image, force_pull_image, registry_auth,
// environment_variables), and this master's own keys beside them: preemptible, max_restarts,
// array. InvalidArgument naming each field that is wrong (bind_mounts are refused: a command
// may not mount host folders); Determined's keys that do not apply are ignored. Never throws.
Result<bus::CommandRunRequest> CommandRunRequestOf(const std::string& body);

}  // namespace det::master::http
