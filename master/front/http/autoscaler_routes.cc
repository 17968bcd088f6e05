#include "master/front/http/autoscaler_routes.h"

#include "master/front/http/cluster_shapes.h"
#include "master/front/http/json.h"
#include "master/front/http/user_routes.h"

namespace det::master::http {
namespace {

using nlohmann::ordered_json;
using Caller = const auth::Principal&;
using Req = const Request&;

// An instance in the API's conventions (camelCase, RFC 3339 times; no terminatedAt while live).
ordered_json InstanceJson(const bus::InstanceInfo& i) {
  ordered_json json = {{"id", i.id},
                       {"resourcePool", i.resource_pool},
                       {"provider", i.provider},
                       {"instanceType", i.instance_type},
                       {"zone", i.zone},
                       {"spot", i.spot},
                       {"state", i.state},
                       {"agent", i.agent},
                       {"launchedAt", TimeText(i.launched_at)}};
  if (i.terminated_at != 0) json["terminatedAt"] = TimeText(i.terminated_at);
  return json;
}

ordered_json DecisionJson(const bus::ScalingDecisionEvent& d) {
  ordered_json terminated = ordered_json::array();
  for (const auto& t : d.terminated) terminated.push_back({{"id", t.id}, {"reason", t.reason}});
  return {{"resourcePool", d.resource_pool},
          {"decidedAt", TimeText(d.decided_at)},
          {"launch", d.launch},
          {"launched", d.launched},
          {"launchReason", d.launch_reason},
          {"terminated", terminated},
          {"error", d.error}};
}

}  // namespace

void RouteAutoscalerApi(Router& routes, FrontDoor& front) {
  auto users = [&front](UserHandler handler) {
    return ForUsers(front.calls.users(), std::move(handler));
  };
  routes.Get("/api/v1/autoscaler/instances", users([&front](Caller caller, Req req) -> UserAnswer {
               DET_ASSIGN_OR_RETURN(std::optional<bool> all, QueryBool(req, "all"));
               DET_ASSIGN_OR_RETURN(
                   bus::InstanceList list,
                   front.reads.Instances(caller, {req.Param("resourcePool"), all.value_or(false)}));
               ordered_json instances = ordered_json::array();
               for (const auto& i : list.instances) instances.push_back(InstanceJson(i));
               return ordered_json{{"instances", instances}};
             }));
  routes.Get("/api/v1/autoscaler/decisions", users([&front](Caller caller, Req req) -> UserAnswer {
               DET_ASSIGN_OR_RETURN(int64_t limit, QueryNumber(req, "limit", 20));
               bus::ScalingDecisionListRequest request{
                   req.Param("resourcePool"),
                   static_cast<int32_t>(std::min<int64_t>(limit, 1000000))};
               DET_ASSIGN_OR_RETURN(bus::ScalingDecisionList list,
                                    front.reads.ScalingDecisions(caller, request));
               ordered_json decisions = ordered_json::array();
               for (const auto& d : list.decisions) decisions.push_back(DecisionJson(d));
               return ordered_json{{"decisions", decisions}};
             }));
}

}  // namespace det::master::http
