#include "master/front/http/master_routes.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "bus/catalog/cluster_json.h"
#include "master/front/http/cluster_shapes.h"
#include "master/front/http/json.h"
#include "master/front/http/user_routes.h"

namespace det::master::http {
namespace {

using nlohmann::ordered_json;
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
          {"gateway_port", info.gateway_port},
          {"gateway_public_key", info.gateway_public_key}};
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
          {"gatewayPort", info.gateway_port},
          {"gatewayPublicKey", info.gateway_public_key}};
}

// Determined's v1LogLevel of an spdlog level name ("info" -> LOG_LEVEL_INFO).
std::string LogLevelOf(const std::string& level) {
  if (level == "trace") return "LOG_LEVEL_TRACE";
  if (level == "debug") return "LOG_LEVEL_DEBUG";
  if (level == "info") return "LOG_LEVEL_INFO";
  if (level == "warning") return "LOG_LEVEL_WARNING";
  if (level == "error") return "LOG_LEVEL_ERROR";
  if (level == "critical") return "LOG_LEVEL_CRITICAL";
  return "LOG_LEVEL_UNSPECIFIED";
}

// MasterLogs' stream: {"result": {"logEntry": {"id", "level", "message", "timestamp"}}} per line
// of the master's log buffer (its last lines), from `offset` (negative: that many from the end),
// at most `limit` (0: all), then, with `follow`, each new line as it comes.
class MasterLogStream : public BodySource {
 public:
  MasterLogStream(FrontDoor& front, auth::Principal caller, int64_t offset, int64_t limit,
                  bool follow)
      : front_(front),
        caller_(std::move(caller)),
        offset_(offset),
        limit_(limit),
        follow_(follow) {}

  Piece Next() override {
    auto reply = front_.master.MasterLogs(caller_, {after_id_, kBufferLines});
    if (!reply.ok()) return {StreamErrorLine(reply.status()), true};
    std::vector<bus::MasterLogLine>& lines = reply->lines;
    if (first_) {  // the offset applies to what the buffer holds now
      first_ = false;
      const Page page = PageOf(offset_, 0, lines.size());
      lines.erase(lines.begin(), lines.begin() + static_cast<std::ptrdiff_t>(page.start));
    }
    Piece piece;
    for (const auto& line : lines) {
      if (limit_ > 0 && sent_ >= limit_) break;
      const ordered_json entry = {{"id", line.id},
                                  {"level", LogLevelOf(line.level)},
                                  {"message", line.message},
                                  {"timestamp", TimeText(line.timestamp)}};
      piece.data += ordered_json{{"result", {{"logEntry", entry}}}}.dump() + "\n";
      ++sent_;
    }
    if (!reply->lines.empty()) after_id_ = reply->lines.back().id;
    piece.done = (limit_ > 0 && sent_ >= limit_) || !follow_;
    return piece;
  }
  std::chrono::milliseconds retry() const override { return std::chrono::milliseconds(500); }

 private:
  static constexpr int32_t kBufferLines = 10000;  // the most MasterLogs answers at once
  FrontDoor& front_;
  const auth::Principal caller_;
  const int64_t offset_;
  const int64_t limit_;
  const bool follow_;
  bool first_ = true;
  int64_t after_id_ = 0;
  int64_t sent_ = 0;
};

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
  routes.Get("/api/v1/master/logs", [&front](Req req, Response& res) {
    auto stream = [&]() -> Result<std::shared_ptr<BodySource>> {
      DET_ASSIGN_OR_RETURN(auth::Principal caller, UserOf(front.calls.users(), req));
      DET_ASSIGN_OR_RETURN(int64_t offset, QueryOffset(req));
      DET_ASSIGN_OR_RETURN(int64_t limit, QueryNumber(req, "limit", 0));  // 0: all
      DET_ASSIGN_OR_RETURN(std::optional<bool> follow, QueryBool(req, "follow"));
      // Asked once before the stream starts: a non-admin gets 403, not a stream with an error.
      DET_RETURN_IF_ERROR(front.master.MasterLogs(caller, {0, 1}).status());
      return std::shared_ptr<BodySource>(std::make_shared<MasterLogStream>(
          front, std::move(caller), offset, limit, follow.value_or(false)));
    }();
    if (!stream.ok()) return Reply(res, stream.status());
    res.Stream("application/json", std::move(*stream));
  });
}

}  // namespace det::master::http
