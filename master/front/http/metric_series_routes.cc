#include "master/front/http/metric_series_routes.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "bus/catalog/experiments_json.h"
#include "master/front/http/json.h"
#include "master/front/http/user_routes.h"
#include "master/front/recent_answers.h"
#include "storage/metrics_repo.h"

namespace det::master::http {
namespace {

using Answer = Result<nlohmann::ordered_json>;
using nlohmann::ordered_json;

constexpr size_t kMaxCompareTrials = 100;
constexpr Duration kRecentAnswersMaxAge = std::chrono::seconds(2);
constexpr size_t kRecentAnswersMaxBytes = 64 << 20;

Result<int> MaxPoints(const Request& req, const std::string& name) {
  DET_ASSIGN_OR_RETURN(int64_t max_points, QueryNumber(req, name, 200));
  return static_cast<int>(std::min<int64_t>(max_points, 1 << 30));
}

// Determined's max_datapoints: 0 (or none) is 200, more than the curve read allows is that.
Result<int> MaxDatapoints(const Request& req) {
  DET_ASSIGN_OR_RETURN(int64_t max_points, QueryNumber(req, "max_datapoints", 0));
  if (max_points == 0) return 200;
  return static_cast<int>(std::min<int64_t>(max_points, storage::kMetricCurveMaxPoints));
}

ordered_json SeriesJson(const storage::MetricSeries& s) {
  return {{"trial_id", s.trial_id},
          {"name", s.name},
          {"steps", s.steps},
          {"values", s.values},
          {"downsampled", s.downsampled}};
}

Answer ExperimentSeries(FrontDoor& front, const auth::Principal& caller, const Request& req) {
  RecordReads::MetricSeriesQuery query;
  query.experiment_id = std::stoll(req.Match(1));
  if (query.experiment_id == 0) return NotFound("experiment 0 does not exist");
  if (req.HasParam("group")) query.kind = req.Param("group");
  query.names = QueryList(req, "name");
  DET_ASSIGN_OR_RETURN(query.max_points, MaxPoints(req, "max_points"));
  DET_ASSIGN_OR_RETURN(auto answer, front.reads.MetricSeries(caller, query));
  ordered_json series = ordered_json::array();
  for (const auto& s : answer.series) series.push_back(SeriesJson(s));
  return ordered_json{{"experiment_id", query.experiment_id},
                      {"group", query.kind},
                      {"names", answer.names},
                      {"series", series},
                      {"truncated", answer.truncated}};
}

// The groups asked for: `group`, or Determined's metric_type enum, or else both training and
// validation (as Determined answers then).
Result<std::vector<std::string>> GroupsOf(const Request& req) {
  const bool typed = req.HasParam("metric_type");
  if (req.HasParam("group")) {
    if (typed) return InvalidArgument("group, metric_type: name one of them, not both");
    return std::vector<std::string>{req.Param("group")};
  }
  if (!typed) return std::vector<std::string>{"training", "validation"};
  const std::string type = req.Param("metric_type");
  if (type == "METRIC_TYPE_VALIDATION") return std::vector<std::string>{"validation"};
  if (type == "METRIC_TYPE_TRAINING") return std::vector<std::string>{"training"};
  return InvalidArgument(
      "metric_type: expected METRIC_TYPE_TRAINING or METRIC_TYPE_VALIDATION, not \"" + type + "\"");
}

Result<std::vector<int64_t>> TrialIds(const Request& req) {
  std::vector<int64_t> ids;
  for (const auto& text : QueryList(req, "trial_ids")) {
    char* end = nullptr;
    const long long id = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || id <= 0) {
      return InvalidArgument("trial_ids: \"" + text + "\" is not a trial id");
    }
    ids.push_back(id);
  }
  if (ids.empty()) return InvalidArgument("trial_ids: name at least one trial");
  if (ids.size() > kMaxCompareTrials) {
    return InvalidArgument("trial_ids: " + std::to_string(ids.size()) + " named, at most " +
                           std::to_string(kMaxCompareTrials));
  }
  return ids;
}

// One trial's DownsampledMetrics: its series merged by step into Determined's data points.
ordered_json DownsampledMetrics(const std::string& group,
                                const std::vector<const storage::MetricSeries*>& series) {
  std::map<int64_t, ordered_json> by_step;
  for (const auto* s : series) {
    for (size_t i = 0; i < s->steps.size(); ++i) by_step[s->steps[i]][s->name] = s->values[i];
  }
  ordered_json data = ordered_json::array();
  for (auto& [step, values] : by_step) data.push_back({{"batches", step}, {"values", values}});
  const std::string type = group == "training"     ? "METRIC_TYPE_TRAINING"
                           : group == "validation" ? "METRIC_TYPE_VALIDATION"
                                                   : "METRIC_TYPE_UNSPECIFIED";
  return ordered_json{{"data", data}, {"group", group}, {"type", type}};
}

Answer CompareTrials(FrontDoor& front, const auth::Principal& caller, const Request& req) {
  RecordReads::MetricSeriesQuery query;
  DET_ASSIGN_OR_RETURN(query.trial_ids, TrialIds(req));
  DET_ASSIGN_OR_RETURN(std::vector<std::string> groups, GroupsOf(req));
  query.names = QueryList(req, "metric_names");
  DET_ASSIGN_OR_RETURN(query.max_points, MaxDatapoints(req));
  query.with_names = false;
  std::vector<std::pair<std::string, RecordReads::MetricSeriesAnswer>> by_group;
  for (const auto& group : groups) {
    query.kind = group;
    DET_ASSIGN_OR_RETURN(auto answer, front.reads.MetricSeries(caller, query));
    by_group.emplace_back(group, std::move(answer));
  }
  ordered_json trials = ordered_json::array();
  for (int64_t id : query.trial_ids) {
    DET_ASSIGN_OR_RETURN(auto trial, front.calls.Call(caller, bus::TrialGetRequest{id}));
    ordered_json metrics = ordered_json::array();
    for (const auto& [group, answer] : by_group) {
      std::vector<const storage::MetricSeries*> mine;
      for (const auto& s : answer.series) {
        if (s.trial_id == id) mine.push_back(&s);
      }
      if (!mine.empty()) metrics.push_back(DownsampledMetrics(group, mine));  // as Determined
    }
    trials.push_back({{"trial", bus::ToJson(trial.trial)}, {"metrics", metrics}});
  }
  return ordered_json{{"trials", trials}};
}

// The cache key of a read: its path and its query as parsed, in order.
std::string KeyOf(const Request& req) {
  std::string key = req.path;
  for (const auto& [name, value] : req.params) key += "\n" + name + "=" + value;
  return key;
}

}  // namespace

void RouteMetricSeries(Router& routes, FrontDoor& front) {
  // An experiment's curves read the same for every user: open pages polling one experiment share
  // one read per kRecentAnswersMaxAge.
  auto recent = std::make_shared<RecentAnswers>(kRecentAnswersMaxAge, kRecentAnswersMaxBytes);
  routes.Get("/api/v1/experiments/{experiment_id}/metrics-series",
             [&front, recent](const Request& req, Response& res) {
               Result<auth::Principal> caller = UserOf(front.calls.users(), req);
               if (!caller.ok()) return Reply(res, caller.status());
               auto answer = recent->Get(KeyOf(req), [&]() -> Result<std::string> {
                 DET_ASSIGN_OR_RETURN(auto json, ExperimentSeries(front, *caller, req));
                 return json.dump();
               });
               if (!answer.ok()) return Reply(res, answer.status());
               res.SetContent(**answer, "application/json");
             });
  auto route = [&front](Answer (*answer)(FrontDoor&, const auth::Principal&, const Request&)) {
    return ForUsers(front.calls.users(),
                    [&front, answer](const auth::Principal& caller, const Request& req) {
                      return answer(front, caller, req);
                    });
  };
  routes.Get("/api/v1/trials/time-series", route(CompareTrials));
}

}  // namespace det::master::http
