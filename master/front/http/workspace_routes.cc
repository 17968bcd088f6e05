#include "master/front/http/workspace_routes.h"

#include "master/front/http/cluster_shapes.h"
#include "master/front/http/json.h"
#include "master/front/http/user_routes.h"

namespace det::master::http {
namespace {

using nlohmann::ordered_json;
using Caller = const auth::Principal&;
using Req = const Request&;

constexpr int64_t kDefaultId = kDefaultWorkspaceId;  // the default workspace and project
constexpr const char* kDefaultName = "Uncategorized";

// How many experiments there are (all of them are in the default project).
Result<int32_t> ExperimentCount(FrontDoor& front, Caller caller) {
  bus::ExperimentListRequest request;
  request.limit = 1;
  DET_ASSIGN_OR_RETURN(bus::ExperimentList list, front.calls.Call(caller, request));
  return list.total;
}

ordered_json WorkspaceJson(int32_t experiments) {
  return {{"id", kDefaultId},
          {"name", kDefaultName},
          {"archived", false},
          {"username", "admin"},
          {"userId", 1},
          {"immutable", true},
          {"numProjects", 1},
          {"pinned", false},
          {"numExperiments", experiments},
          {"state", "WORKSPACE_STATE_UNSPECIFIED"},
          {"errorMessage", ""}};
}

ordered_json ProjectJson(int32_t experiments) {
  return {{"id", kDefaultId},
          {"name", kDefaultName},
          {"workspaceId", kDefaultId},
          {"workspaceName", kDefaultName},
          {"description", "The default project: every experiment is in it"},
          {"notes", ordered_json::array()},
          {"numActiveExperiments", 0},
          {"numExperiments", experiments},
          {"numRuns", 0},
          {"archived", false},
          {"username", "admin"},
          {"userId", 1},
          {"immutable", true},
          {"state", "WORKSPACE_STATE_UNSPECIFIED"},
          {"errorMessage", ""},
          {"key", "UNCAT"}};
}

// The one item, or none when ?name= names something else.
ordered_json OnlyIfNamed(Req req, ordered_json item) {
  const std::string name = req.Param("name");
  if (!name.empty() && name != kDefaultName) return ordered_json::array();
  return ordered_json::array({std::move(item)});
}

Status RequireDefault(int64_t id, const std::string& what) {
  if (id == kDefaultId) return Status::Ok();
  return NotFound(what + " " + std::to_string(id) + " not found (only the default, " +
                  std::to_string(kDefaultId) + " \"" + kDefaultName + "\", exists)");
}

}  // namespace

void RouteWorkspaceApi(Router& routes, FrontDoor& front) {
  auto users = [&front](UserHandler handler) {
    return ForUsers(front.calls.users(), std::move(handler));
  };
  routes.Get("/api/v1/workspaces", users([&front](Caller caller, Req req) -> UserAnswer {
               DET_ASSIGN_OR_RETURN(int32_t experiments, ExperimentCount(front, caller));
               ordered_json all = OnlyIfNamed(req, WorkspaceJson(experiments));
               const size_t size = all.size();
               return ordered_json{{"workspaces", std::move(all)},
                                   {"pagination", PaginationJson(PageOf(0, 0, size))}};
             }));
  routes.Get("/api/v1/workspaces/{workspace_id}",
             users([&front](Caller caller, Req req) -> UserAnswer {
               DET_RETURN_IF_ERROR(RequireDefault(std::stoll(req.Match(1)), "workspace"));
               DET_ASSIGN_OR_RETURN(int32_t experiments, ExperimentCount(front, caller));
               return ordered_json{{"workspace", WorkspaceJson(experiments)}};
             }));
  routes.Get("/api/v1/workspaces/{workspace_id}/projects",
             users([&front](Caller caller, Req req) -> UserAnswer {
               DET_RETURN_IF_ERROR(RequireDefault(std::stoll(req.Match(1)), "workspace"));
               DET_ASSIGN_OR_RETURN(int32_t experiments, ExperimentCount(front, caller));
               ordered_json all = OnlyIfNamed(req, ProjectJson(experiments));
               const size_t size = all.size();
               return ordered_json{{"projects", std::move(all)},
                                   {"pagination", PaginationJson(PageOf(0, 0, size))}};
             }));
  routes.Get("/api/v1/projects/{project_id}", users([&front](Caller caller, Req req) -> UserAnswer {
               DET_RETURN_IF_ERROR(RequireDefault(std::stoll(req.Match(1)), "project"));
               DET_ASSIGN_OR_RETURN(int32_t experiments, ExperimentCount(front, caller));
               return ordered_json{{"project", ProjectJson(experiments)}};
             }));
  routes.Get("/api/v1/templates", users([](Caller, Req) -> UserAnswer {
               return ordered_json{{"templates", ordered_json::array()},
                                   {"pagination", PaginationJson(PageOf(0, 0, 0))}};
             }));
}

}  // namespace det::master::http
