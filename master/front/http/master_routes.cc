#include "master/front/http/master_routes.h"

#include "bus/catalog/cluster_json.h"
#include "master/front/http/json.h"
#include "master/front/http/user_routes.h"

namespace det::master::http {
namespace {

using nlohmann::ordered_json;
using Caller = const auth::Principal&;
using Req = const Request&;

}  // namespace

void RouteMasterApi(Router& routes, FrontDoor& front) {
  routes.Get("/api/v1/master", [&front](Req, Response& res) {
    Reply(res, UserAnswer(bus::ToJson(front.calls.info())));
  });
  routes.Get("/metrics", [&front](Req req, Response& res) {
    auto text = [&]() -> Result<std::string> {
      DET_ASSIGN_OR_RETURN(auth::Principal caller, UserOf(front.calls.users(), req));
      return front.master.Metrics(caller);
    }();
    if (!text.ok()) {
      Reply(res, text.status());
      return;
    }
    res.SetContent(*text, "text/plain; version=0.0.4");
  });
  auto users = [&front](UserHandler handler) {
    return ForUsers(front.calls.users(), std::move(handler));
  };
  routes.Get("/api/v1/master/logs", users([&front](Caller caller, Req req) -> UserAnswer {
               DET_ASSIGN_OR_RETURN(int64_t after, QueryNumber(req, "after_id", 0));
               DET_ASSIGN_OR_RETURN(int64_t limit, QueryNumber(req, "limit", 1000));
               DET_ASSIGN_OR_RETURN(
                   bus::MasterLogsReply reply,
                   front.master.MasterLogs(
                       caller, {after, static_cast<int32_t>(std::min<int64_t>(limit, 1000000))}));
               ordered_json lines = ordered_json::array();
               for (const auto& line : reply.lines) lines.push_back(bus::ToJson(line));
               return ordered_json{{"logs", lines}};
             }));
}

}  // namespace det::master::http
