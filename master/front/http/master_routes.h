#pragma once

#include "master/front/front_door.h"
#include "master/front/http/router.h"

namespace det::master::http {

// The master itself and its metrics:
//
//   GET /api/v1/master                       version, cluster name and ids (no token needed)
//   GET /api/v1/master/logs[?after_id=&limit=]  its recent log lines (admins)
//   GET /metrics                             Prometheus' text format (a user's token)
void RouteMasterApi(Router& routes, FrontDoor& front);

}  // namespace det::master::http
