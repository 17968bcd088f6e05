#pragma once

#include "master/front/front_door.h"
#include "master/front/http/router.h"

namespace det::master::http {

// The autoscaler's records, as `det autoscaler instances|decisions` shows them:
//
//   GET /api/v1/autoscaler/instances[?resource_pool=P&all=true]  {"instances": [...]}
//   GET /api/v1/autoscaler/decisions[?resource_pool=P&limit=N]   {"decisions": [...]}, newest first
void RouteAutoscalerApi(Router& routes, FrontDoor& front);

}  // namespace det::master::http
