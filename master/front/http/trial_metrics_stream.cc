#include "master/front/http/trial_metrics_stream.h"

#include <chrono>
#include <map>
#include <memory>

#include "master/experiments/experiment/experiment.h"
#include "master/front/http/cluster_shapes.h"
#include "master/front/http/json.h"
#include "master/front/http/user_routes.h"

namespace det::master::http {
namespace {

using nlohmann::ordered_json;

constexpr int kMetricsPage = 1000;
// At most this many trials per stream, and a look for new reports this often: each look asks the
// experiment service and PostgreSQL once per trial.
constexpr size_t kMaxTrials = 100;
constexpr auto kMetricsPoll = std::chrono::seconds(1);

ordered_json ReportJson(int64_t trial_id, const std::string& group, const bus::TrialMetric& m) {
  const std::string key = group == "validation" ? "validation_metrics" : "avg_metrics";
  ordered_json values = ordered_json::parse(m.metrics_json, nullptr, /*allow_exceptions=*/false);
  if (values.is_discarded()) values = ordered_json::object();
  return {{"id", m.step},
          {"trialId", trial_id},
          {"trialRunId", m.run_id},
          {"totalBatches", m.step},
          {"endTime", TimeText(m.reported_at)},
          {"group", group},
          {"archived", false},
          {"metrics", {{key, std::move(values)}}}};
}

// The trials' reports of one group, page by page, then as they come until all trials ended.
class MetricsStream : public BodySource {
 public:
  MetricsStream(FrontDoor& front, auth::Principal caller, std::vector<int64_t> trials,
                std::string group)
      : front_(front), caller_(std::move(caller)), group_(std::move(group)) {
    for (int64_t id : trials) after_[id] = -1;
  }

  Piece Next() override {
    ordered_json reports = ordered_json::array();
    bool all_final = true;
    for (auto& [trial_id, after] : after_) {
      // The state first: a report stored before the trial ended is read after it.
      auto trial = front_.calls.Call(caller_, bus::TrialGetRequest{trial_id});
      if (!trial.ok()) return Error(trial.status());
      all_final = all_final && experiment::IsTerminal(trial->trial.state);
      auto page = front_.reads.MetricReports(caller_, trial_id, group_, after, kMetricsPage);
      if (!page.ok()) return Error(page.status());
      for (const auto& m : *page) {
        reports.push_back(ReportJson(trial_id, group_, m));
        after = m.step;
      }
      if (static_cast<int>(page->size()) == kMetricsPage) all_final = false;  // more to read
    }
    Piece piece;
    if (!reports.empty()) {
      piece.data = ordered_json{{"result", {{"metrics", std::move(reports)}}}}.dump() + "\n";
    }
    piece.done = all_final && piece.data.empty();
    return piece;
  }
  std::chrono::milliseconds retry() const override { return kMetricsPoll; }

 private:
  static Piece Error(const Status& error) { return {StreamErrorLine(error), true}; }

  FrontDoor& front_;
  const auth::Principal caller_;
  const std::string group_;
  std::map<int64_t, int64_t> after_;  // trial -> the last step sent
};

// ?trialIds= (repeated or comma-separated), each a whole number; at least one.
Result<std::vector<int64_t>> TrialIdsOf(const Request& req) {
  std::vector<int64_t> ids;
  for (const std::string& text : QueryList(req, "trialIds")) {
    if (text.empty() || text.size() > 18 ||
        text.find_first_not_of("0123456789") != std::string::npos) {
      return InvalidArgument("trialIds: expected trial ids, got \"" + text + "\"");
    }
    ids.push_back(std::stoll(text));
  }
  if (ids.empty()) return InvalidArgument("trialIds: is required (one or more trial ids)");
  if (ids.size() > kMaxTrials) {
    return InvalidArgument("trialIds: at most " + std::to_string(kMaxTrials) + " trials at once");
  }
  return ids;
}

}  // namespace

void RouteTrialMetricsStreams(Router& routes, FrontDoor& front) {
  auto stream = [&front](std::string fixed_group) {
    return [&front, fixed_group](const Request& req, Response& res) {
      auto start = [&]() -> Status {
        DET_ASSIGN_OR_RETURN(auth::Principal caller, UserOf(front.calls.users(), req));
        DET_ASSIGN_OR_RETURN(std::vector<int64_t> trials, TrialIdsOf(req));
        const std::string group = fixed_group.empty() ? req.Param("group") : fixed_group;
        if (group.empty()) return InvalidArgument("group: is required (training, validation, ...)");
        for (int64_t id : trials) {  // 404 and 400 before the stream starts
          DET_RETURN_IF_ERROR(front.calls.Call(caller, bus::TrialGetRequest{id}).status());
          DET_RETURN_IF_ERROR(front.reads.MetricReports(caller, id, group, -1, 1).status());
        }
        res.Stream("application/x-ndjson",
                   std::make_shared<MetricsStream>(front, caller, std::move(trials), group));
        return Status::Ok();
      };
      if (Status started = start(); !started.ok()) Reply(res, started);
    };
  };
  routes.Get("/api/v1/trials/metrics/trial_metrics", stream(""));
  routes.Get("/api/v1/trials/training_metrics", stream("training"));
  routes.Get("/api/v1/trials/validation_metrics", stream("validation"));
}

}  // namespace det::master::http
