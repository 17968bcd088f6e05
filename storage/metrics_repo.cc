#include "storage/metrics_repo.h"

#include <algorithm>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>

#include "storage/metric_rollups.h"
#include "storage/sql_support.h"

namespace det::storage {

std::vector<MetricPoint> ReadMetrics(pqxx::work& tx, int64_t trial_id, const std::string& kind,
                                     int64_t after_step, int limit) {
  std::vector<MetricPoint> points;
  for (const auto& row :
       tx.exec_params("SELECT trial_id, kind, step, run_id, metrics::text, det_ns(reported_at)"
                      " FROM metrics WHERE trial_id = $1 AND kind = $2 AND step > $3"
                      " ORDER BY step LIMIT $4",
                      trial_id, kind, after_step, limit)) {
    points.push_back({row[0].as<int64_t>(), row[1].as<std::string>(), row[2].as<int64_t>(),
                      row[3].as<int32_t>(), row[4].as<std::string>(), row[5].as<int64_t>()});
  }
  return points;
}

bool RecordMetric(pqxx::work& tx, const MetricPoint& point) {
  const bool stored =
      tx.exec_params(
            "INSERT INTO metrics (trial_id, kind, step, run_id, metrics)"
            " VALUES ($1, $2, $3, $4, $5::jsonb) ON CONFLICT DO NOTHING",
            point.trial_id, point.kind, point.step, point.run_id, point.metrics_json)
          .affected_rows() == 1;
  if (stored) FoldMetrics(tx, point.trial_id, point.kind, {{point.step, &point.metrics_json}});
  return stored;
}

namespace {

// Per step range (StepRanges), per metric, the lowest and the highest value offered.
class RangeExtremes {
 public:
  using Extremes = MetricExtremes<std::string>;

  RangeExtremes(int64_t first, int64_t last, int64_t ranges)
      : ranges_(first, last, static_cast<size_t>(ranges)), extremes_(ranges_.size()) {}

  // A value at `step` as a candidate for its range's minimum (`low`) and/or maximum (`high`).
  void Offer(const std::string& name, int64_t step, double value, const std::string& reported,
             bool low, bool high) {
    const std::optional<size_t> range = ranges_.Of(step);
    if (!range) return;
    Extremes& e = extremes_[*range][name];
    if (low) e.OfferLow(step, value, reported);
    if (high) e.OfferHigh(step, value, reported);
  }

  const std::vector<std::map<std::string, Extremes>>& ranges() const { return extremes_; }

 private:
  StepRanges ranges_;
  std::vector<std::map<std::string, Extremes>> extremes_;
};

// Offers every point in [first, last] (a few times max_points at most: see ReadMetricCurve).
void OfferPoints(pqxx::work& tx, int64_t trial_id, const std::string& kind, int64_t first,
                 int64_t last, RangeExtremes& extremes) {
  for (const auto& row :
       tx.exec_params("SELECT step, metrics::text FROM metrics WHERE trial_id = $1 AND kind = $2"
                      " AND step BETWEEN $3 AND $4 ORDER BY step",
                      trial_id, kind, first, last)) {
    const int64_t step = row[0].as<int64_t>();
    for (const auto& number : NumbersOf(row[1].as<std::string>())) {
      extremes.Offer(number.name, step, number.value, number.text, true, true);
    }
  }
}

// Offers the rollups' extremes at the finest level that needs no more than 8 rows per range.
void OfferRollups(pqxx::work& tx, int64_t trial_id, const std::string& kind, int64_t first,
                  int64_t last, int64_t ranges, RangeExtremes& extremes) {
  const int level = RollupLevelFor(first, last, 8 * ranges);
  const int shift = kRollupShift * level;
  for (const auto& row :
       tx.exec_params("SELECT extremes::text FROM metric_rollups WHERE trial_id = $1 AND kind = $2"
                      " AND level = $3 AND bucket BETWEEN $4 AND $5 ORDER BY bucket",
                      trial_id, kind, level, first >> shift, last >> shift)) {
    const auto metrics = nlohmann::json::parse(row[0].c_str(), nullptr, false);
    if (!metrics.is_object()) continue;
    for (const auto& [name, e] : metrics.items()) {
      if (!e.is_array() || e.size() != 4 || !e[0].is_number_integer() || !e[1].is_number() ||
          !e[2].is_number_integer() || !e[3].is_number()) {
        continue;
      }
      extremes.Offer(name, e[0].get<int64_t>(), e[1].get<double>(), e[1].dump(), true, false);
      extremes.Offer(name, e[2].get<int64_t>(), e[3].get<double>(), e[3].dump(), false, true);
    }
  }
}

// The point of largest (`last`) or smallest step after `after_step`.
MetricPoint EndPoint(pqxx::work& tx, int64_t trial_id, const std::string& kind, int64_t after_step,
                     bool last) {
  const auto row = tx.exec_params1(
      std::string("SELECT step, run_id, metrics::text FROM metrics WHERE trial_id = $1 AND kind "
                  "= $2 AND step > $3 ORDER BY step ") +
          (last ? "DESC" : "ASC") + " LIMIT 1",
      trial_id, kind, after_step);
  return {trial_id, kind, row[0].as<int64_t>(), row[1].as<int32_t>(), row[2].as<std::string>()};
}

}  // namespace

Result<MetricCurve> ReadMetricCurve(pqxx::work& tx, int64_t trial_id, const std::string& kind,
                                    int64_t after_step, int max_points) {
  // Up to this many points, ranges are cut from the points themselves; beyond, from the rollups.
  const int64_t raw_limit = std::min(int64_t{max_points} * 16, kMetricCurveRawLimit);
  MetricCurve curve;
  const auto count = tx.exec_params1(
                           "SELECT count(*) FROM (SELECT 1 FROM metrics WHERE trial_id = $1 AND "
                           "kind = $2 AND step > $3 LIMIT $4) AS s",
                           trial_id, kind, after_step, raw_limit + 1)[0]
                         .as<int64_t>();
  if (count <= max_points) {
    curve.points = ReadMetrics(tx, trial_id, kind, after_step, max_points);
    return curve;
  }
  curve.downsampled = true;
  const MetricPoint first = EndPoint(tx, trial_id, kind, after_step, /*last=*/false);
  const MetricPoint last = EndPoint(tx, trial_id, kind, after_step, /*last=*/true);
  const int64_t ranges = std::max(1, max_points / 2);
  RangeExtremes extremes(first.step, last.step, ranges);
  if (count <= raw_limit) {
    OfferPoints(tx, trial_id, kind, first.step, last.step, extremes);
  } else {
    OfferRollups(tx, trial_id, kind, first.step, last.step, ranges, extremes);
  }
  // Each chosen value at its step; the first and last points whole.
  std::map<int64_t, nlohmann::json> steps;
  for (const MetricPoint* end : {&first, &last}) {
    auto whole = nlohmann::json::parse(end->metrics_json, nullptr, false);
    steps[end->step] = whole.is_object() ? whole : nlohmann::json::object();
  }
  for (const auto& range : extremes.ranges()) {
    for (const auto& [name, e] : range) {
      if (e.has_min) steps[e.min_step][name] = nlohmann::json::parse(e.min_text);
      if (e.has_max) steps[e.max_step][name] = nlohmann::json::parse(e.max_text);
    }
  }
  curve.points.reserve(steps.size());
  for (auto& [step, metrics] : steps) {
    const int32_t run_id = step == first.step ? first.run_id : step == last.step ? last.run_id : 0;
    curve.points.push_back({trial_id, kind, step, run_id, metrics.dump()});
  }
  return curve;
}

}  // namespace det::storage
