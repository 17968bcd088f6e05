#pragma once

#include "master/front/front_door.h"
#include "master/front/http/router.h"

namespace det::master::http {

// Determined's default workspace and project, the one every experiment here lives in
// ("Uncategorized", id 1 both), so that Determined's `det workspace list`, `det project list
// Uncategorized` and `det template list` answer:
//
//   GET /api/v1/workspaces[?name=]                {"workspaces": [v1Workspace], "pagination"}
//   GET /api/v1/workspaces/{id}                   {"workspace"}
//   GET /api/v1/workspaces/{id}/projects[?name=]  {"projects": [v1Project], "pagination"}
//   GET /api/v1/projects/{id}                     {"project"}
//   GET /api/v1/templates                         {"templates": [], "pagination"}
//
// 404 names any other workspace or project id. Users' tokens only.
void RouteWorkspaceApi(Router& routes, FrontDoor& front);

}  // namespace det::master::http
