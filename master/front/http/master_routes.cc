#include "master/front/http/master_routes.h"

#include "bus/catalog/cluster_json.h"
#include "master/front/http/json.h"
#include "master/front/http/user_routes.h"

namespace det::master::http {
namespace {

using nlohmann::ordered_json;
using Caller = const auth::Principal&;
using Req = const Request&;

// The Determined release whose API this master serves: Determined's clients compare their own
// version with `version` and warn on a difference. This master's own is `buildVersion`.
constexpr const char* kDeterminedApiVersion = "0.38.1";

// GET /info, as Determined's master answers it (snake_case: `det version` and `det auth sso` read
// it before they log in), with this master's gateway port.
ordered_json InfoJson(const bus::MasterInfo& info) {
  return {{"version", kDeterminedApiVersion},
          {"build_version", info.version},
          {"master_id", info.master_id},
          {"cluster_id", info.cluster_id},
          {"cluster_name", info.cluster_name},
          {"telemetry", {{"enabled", false}, {"segment_key", ""}}},
          {"sso_providers", ordered_json::array()},
          {"external_login_uri", ""},
          {"external_logout_uri", ""},
          {"branding", "determined"},
          {"rbac_enabled", false},
          {"strict_job_queue_control", false},
          {"feature_switches", ordered_json::array()},
          {"user_management_enabled", true},
          {"started_at", info.started_at},
          {"gateway_port", info.gateway_port}};
}

// GET /api/v1/master: Determined's v1GetMasterResponse, with the gateway port and start time.
ordered_json MasterJson(const bus::MasterInfo& info) {
  return {{"version", kDeterminedApiVersion},
          {"buildVersion", info.version},
          {"masterId", info.master_id},
          {"clusterId", info.cluster_id},
          {"clusterName", info.cluster_name},
          {"telemetryEnabled", false},
          {"ssoProviders", ordered_json::array()},
          {"externalLoginUri", ""},
          {"externalLogoutUri", ""},
          {"branding", "determined"},
          {"rbacEnabled", false},
          {"product", "PRODUCT_UNSPECIFIED"},
          {"featureSwitches", ordered_json::array()},
          {"userManagementEnabled", true},
          {"strictJobQueueControl", false},
          {"hasCustomLogo", false},
          {"startedAt", info.started_at},
          {"gatewayPort", info.gateway_port}};
}

}  // namespace

void RouteMasterApi(Router& routes, FrontDoor& front) {
  routes.Get("/info", [&front](Req, Response& res) {
    Reply(res, UserAnswer(InfoJson(front.calls.info())));
  });
  routes.Get("/api/v1/master", [&front](Req, Response& res) {
    Reply(res, UserAnswer(MasterJson(front.calls.info())));
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
