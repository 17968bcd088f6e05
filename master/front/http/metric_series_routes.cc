#include "master/front/http/metric_series_routes.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "bus/catalog/experiments_json.h"
#include "master/front/http/cluster_shapes.h"
#include "master/front/http/experiment_shapes.h"
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

// Determined's maxDatapoints: 0 (or none) is 200, more than the curve read allows is that.
Result<int> MaxDatapoints(const Request& req) {
  DET_ASSIGN_OR_RETURN(int64_t max_points,
                       QueryNumber(req, QueryName(req, "maxDatapoints", "max_datapoints"), 0));
  if (max_points == 0) return 200;
  return static_cast<int>(std::min<int64_t>(max_points, storage::kMetricCurveMaxPoints));
}

ordered_json SeriesJson(const storage::MetricSeries& s) {
  return {{"trialId", s.trial_id},
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
  DET_ASSIGN_OR_RETURN(query.max_points, QueryMaxPoints(req, 200));
  DET_ASSIGN_OR_RETURN(auto answer, front.reads.MetricSeries(caller, query));
  ordered_json series = ordered_json::array();
  for (const auto& s : answer.series) series.push_back(SeriesJson(s));
  return ordered_json{{"experimentId", query.experiment_id},
                      {"group", query.kind},
                      {"names", answer.names},
                      {"series", series},
                      {"truncated", answer.truncated}};
}

// The groups asked for: `group`, or Determined's metricType enum, or else both training and
// validation (as Determined answers then).
Result<std::vector<std::string>> GroupsOf(const Request& req) {
  const std::string type_name = QueryName(req, "metricType", "metric_type");
  const bool typed = req.HasParam(type_name);
  if (req.HasParam("group")) {
    if (typed) return InvalidArgument("group, " + type_name + ": name one of them, not both");
    return std::vector<std::string>{req.Param("group")};
  }
  if (!typed) return std::vector<std::string>{"training", "validation"};
  const std::string type = req.Param(type_name);
  if (type == "METRIC_TYPE_VALIDATION") return std::vector<std::string>{"validation"};
  if (type == "METRIC_TYPE_TRAINING") return std::vector<std::string>{"training"};
  return InvalidArgument(type_name +
                         ": expected METRIC_TYPE_TRAINING or METRIC_TYPE_VALIDATION, not \"" +
                         type + "\"");
}

Result<std::vector<int64_t>> TrialIds(const Request& req) {
  const std::string name = QueryName(req, "trialIds", "trial_ids");
  std::vector<int64_t> ids;
  for (const auto& text : QueryList(req, name)) {
    char* end = nullptr;
    const long long id = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || id <= 0) {
      return InvalidArgument(name + ": \"" + text + "\" is not a trial id");
    }
    ids.push_back(id);
  }
  if (ids.empty()) return InvalidArgument(name + ": name at least one trial");
  if (ids.size() > kMaxCompareTrials) {
    return InvalidArgument(name + ": " + std::to_string(ids.size()) + " named, at most " +
                           std::to_string(kMaxCompareTrials));
  }
  return ids;
}

// One trial's DownsampledMetrics: its series merged by step into Determined's data points
// (v1DataPoint: batches, time, values).
ordered_json DownsampledMetrics(const std::string& group,
                                const std::vector<const storage::MetricSeries*>& series) {
  std::map<int64_t, std::pair<int64_t, ordered_json>> by_step;  // step -> (time, values)
  for (const auto* s : series) {
    for (size_t i = 0; i < s->steps.size(); ++i) {
      auto& [time, values] = by_step[s->steps[i]];
      if (i < s->times.size()) time = std::max(time, s->times[i]);
      values[s->name] = s->values[i];
    }
  }
  ordered_json data = ordered_json::array();
  for (auto& [step, point] : by_step) {
    data.push_back({{"batches", step}, {"time", TimeText(point.first)}, {"values", point.second}});
  }
  const std::string type = group == "training"     ? "METRIC_TYPE_TRAINING"
                           : group == "validation" ? "METRIC_TYPE_VALIDATION"
                                                   : "METRIC_TYPE_UNSPECIFIED";
  return ordered_json{{"data", data}, {"group", group}, {"type", type}};
}

Answer CompareTrials(FrontDoor& front, const auth::Principal& caller, const Request& req) {
  RecordReads::MetricSeriesQuery query;
  DET_ASSIGN_OR_RETURN(query.trial_ids, TrialIds(req));
  DET_ASSIGN_OR_RETURN(std::vector<std::string> groups, GroupsOf(req));
  query.names = QueryList(req, QueryName(req, "metricNames", "metric_names"));
  DET_ASSIGN_OR_RETURN(query.max_points, MaxDatapoints(req));
  query.with_names = false;
  query.with_times = true;
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
    trials.push_back({{"trial", TrialJson(trial.trial)}, {"metrics", metrics}});
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

Result<int> QueryMaxPoints(const Request& req, int fallback) {
  DET_ASSIGN_OR_RETURN(int64_t max_points, QueryNumber(req, "maxPoints", fallback));
  if (req.HasParam("maxPoints") &&
      (max_points < 2 || max_points > storage::kMetricCurveMaxPoints)) {
    return InvalidArgument("maxPoints: " + std::to_string(max_points) + " is outside 2.." +
                           std::to_string(storage::kMetricCurveMaxPoints));
  }
  return static_cast<int>(max_points);
}

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
