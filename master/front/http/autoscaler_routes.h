#pragma once

#include "master/front/front_door.h"
#include "master/front/http/router.h"

namespace det::master::http {

// The autoscaler's records, as `det autoscaler instances|decisions` shows them, in the API's
// conventions (camelCase, RFC 3339 times):
//
//   GET /api/v1/autoscaler/instances[?resourcePool=P&all=true]  {"instances": [{"id",
//       "resourcePool", "provider", "instanceType", "zone", "spot", "state", "agent",
//       "launchedAt", "terminatedAt" (once it ended)}]}, oldest first; live ones unless all=true
//   GET /api/v1/autoscaler/decisions[?resourcePool=P&limit=N]   {"decisions": [{"resourcePool",
//       "decidedAt", "launch", "launched", "launchReason", "terminated": [{"id", "reason"}],
//       "error"}]}, newest first
void RouteAutoscalerApi(Router& routes, FrontDoor& front);

}  // namespace det::master::http
