#pragma once

#include "master/front/front_door.h"
#include "master/front/http/router.h"

namespace det::master::http {

// The master itself and its metrics:
//
//   GET /api/v1/master                       version, cluster name and ids (no token needed)
//   GET /api/v1/master/logs[?offset=&limit=&follow=]  its recent log lines (admins), as
//                                            Determined's MasterLogs streams them: NDJSON of
//                                            {"result": {"logEntry": {"id", "level", "message",
//                                            "timestamp"}}}; offset<0: the last -offset lines
//   GET /metrics                             Prometheus' text format (a user's token)
void RouteMasterApi(Router& routes, FrontDoor& front);

}  // namespace det::master::http
