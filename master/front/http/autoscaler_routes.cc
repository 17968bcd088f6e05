#include "master/front/http/autoscaler_routes.h"

#include "bus/catalog/cluster_json.h"
#include "master/front/http/json.h"
#include "master/front/http/user_routes.h"

namespace det::master::http {
namespace {

using nlohmann::ordered_json;
using Caller = const auth::Principal&;
using Req = const Request&;

}  // namespace

void RouteAutoscalerApi(Router& routes, FrontDoor& front) {
  auto users = [&front](UserHandler handler) {
    return ForUsers(front.calls.users(), std::move(handler));
  };
  routes.Get("/api/v1/autoscaler/instances", users([&front](Caller caller, Req req) -> UserAnswer {
               DET_ASSIGN_OR_RETURN(bus::InstanceList list,
                                    front.reads.Instances(caller, {req.Param("resource_pool"),
                                                                   req.Param("all") == "true"}));
               ordered_json instances = ordered_json::array();
               for (const auto& i : list.instances) instances.push_back(bus::ToJson(i));
               return ordered_json{{"instances", instances}};
             }));
  routes.Get("/api/v1/autoscaler/decisions", users([&front](Caller caller, Req req) -> UserAnswer {
               DET_ASSIGN_OR_RETURN(int64_t limit, QueryNumber(req, "limit", 20));
               bus::ScalingDecisionListRequest request{
                   req.Param("resource_pool"),
                   static_cast<int32_t>(std::min<int64_t>(limit, 1000000))};
               DET_ASSIGN_OR_RETURN(bus::ScalingDecisionList list,
                                    front.reads.ScalingDecisions(caller, request));
               ordered_json decisions = ordered_json::array();
               for (const auto& d : list.decisions) decisions.push_back(bus::ToJson(d));
               return ordered_json{{"decisions", decisions}};
             }));
}

}  // namespace det::master::http
