#include "storage/metric_series.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>

#include "storage/telemetry_repo.h"

namespace det::storage {

void DownsampleToExtremes(MetricSeries& series, int max_points) {
  const size_t n = series.steps.size();
  if (max_points < 2 || n <= static_cast<size_t>(max_points)) return;
  const size_t ranges = static_cast<size_t>(std::max(1, max_points / 2));
  const long double first = static_cast<long double>(series.steps.front());
  const long double span = static_cast<long double>(series.steps.back()) - first + 1;
  std::vector<size_t> low(ranges, n), high(ranges, n);
  for (size_t i = 0; i < n; ++i) {
    const auto range = std::min(
        static_cast<size_t>((static_cast<long double>(series.steps[i]) - first) * ranges / span),
        ranges - 1);
    if (low[range] == n || series.values[i] < series.values[low[range]]) low[range] = i;
    if (high[range] == n || series.values[i] > series.values[high[range]]) high[range] = i;
  }
  std::vector<size_t> kept{0, n - 1};
  for (size_t r = 0; r < ranges; ++r) {
    if (low[r] != n) kept.push_back(low[r]);
    if (high[r] != n) kept.push_back(high[r]);
  }
  std::sort(kept.begin(), kept.end());
  kept.erase(std::unique(kept.begin(), kept.end()), kept.end());
  MetricSeries cut{series.trial_id, series.name, {}, {}, true};
  cut.steps.reserve(kept.size());
  cut.values.reserve(kept.size());
  for (size_t i : kept) {
    cut.steps.push_back(series.steps[i]);
    cut.values.push_back(series.values[i]);
  }
  series = std::move(cut);
}

namespace {

using SeriesKey = std::pair<int64_t, std::string>;  // trial, metric name
using SeriesMap = std::map<SeriesKey, MetricSeries>;

std::string BigintArray(const std::vector<int64_t>& ids) {
  std::string text = "{";
  for (size_t i = 0; i < ids.size(); ++i) text += (i ? "," : "") + std::to_string(ids[i]);
  return text + "}";
}

// Each trial's number of points of `kind`, counted no further than `cap` + 1, in the given order.
std::vector<int64_t> CountPoints(pqxx::work& tx, const std::vector<int64_t>& trial_ids,
                                 const std::string& kind, int64_t cap) {
  std::vector<int64_t> counts;
  counts.reserve(trial_ids.size());
  for (const auto& row : tx.exec_params(
           "SELECT (SELECT count(*) FROM (SELECT 1 FROM metrics m WHERE m.trial_id = t.id"
           " AND m.kind = $2 LIMIT $3) AS s) FROM unnest($1::bigint[]) WITH ORDINALITY AS t (id, n)"
           " ORDER BY t.n",
           BigintArray(trial_ids), kind, cap + 1)) {
    counts.push_back(row[0].as<int64_t>());
  }
  return counts;
}

// Every numeric value of `name` of these trials' points, into `found`.
void ReadWholeCurves(pqxx::work& tx, const std::vector<int64_t>& trial_ids, const std::string& kind,
                     const std::string& name, SeriesMap& found) {
  for (const auto& row :
       tx.exec_params("SELECT trial_id, step, metrics->>$3 FROM metrics WHERE trial_id ="
                      " ANY($1::bigint[]) AND kind = $2 AND jsonb_typeof(metrics->$3) = 'number'"
                      " ORDER BY trial_id, step",
                      BigintArray(trial_ids), kind, name)) {
    const int64_t trial = row[0].as<int64_t>();
    MetricSeries& series = found[{trial, name}];
    series.trial_id = trial;
    series.name = name;
    series.steps.push_back(row[1].as<int64_t>());
    series.values.push_back(std::strtod(row[2].c_str(), nullptr));
  }
}

// A long curve from the rollups: each name's numeric values among ReadMetricCurve's points.
Status ReadLongCurve(pqxx::work& tx, int64_t trial_id, const std::string& kind,
                     const std::vector<std::string>& names, int max_points, SeriesMap& found) {
  DET_ASSIGN_OR_RETURN(MetricCurve curve, ReadMetricCurve(tx, trial_id, kind, -1, max_points));
  for (const auto& point : curve.points) {
    const auto metrics = nlohmann::json::parse(point.metrics_json, nullptr, false);
    if (!metrics.is_object()) continue;
    for (const auto& name : names) {
      const auto value = metrics.find(name);
      if (value == metrics.end() || !value->is_number()) continue;
      MetricSeries& series = found[{trial_id, name}];
      series.trial_id = trial_id;
      series.name = name;
      series.downsampled = curve.downsampled;
      series.steps.push_back(point.step);
      series.values.push_back(value->get<double>());
    }
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<MetricSeries>> ReadMetricSeries(pqxx::work& tx,
                                                   const std::vector<int64_t>& trial_ids,
                                                   const std::string& kind,
                                                   const std::vector<std::string>& names,
                                                   int max_points) {
  if (max_points < 2 || max_points > kMetricCurveMaxPoints) {
    return InvalidArgument("max_points: " + std::to_string(max_points) + " is outside 2.." +
                           std::to_string(kMetricCurveMaxPoints));
  }
  std::vector<MetricSeries> all;
  if (trial_ids.empty() || names.empty()) return all;
  const int64_t raw_limit = std::min(int64_t{max_points} * 16, kMetricCurveRawLimit);
  const std::vector<int64_t> counts = CountPoints(tx, trial_ids, kind, raw_limit);
  SeriesMap found;
  std::vector<int64_t> batch;
  int64_t batch_rows = 0;
  auto flush = [&] {
    for (const auto& name : names) ReadWholeCurves(tx, batch, kind, name, found);
    for (auto& [key, series] : found) DownsampleToExtremes(series, max_points);  // bounds memory
    batch.clear();
    batch_rows = 0;
  };
  for (size_t i = 0; i < trial_ids.size(); ++i) {
    if (counts[i] == 0) continue;
    if (counts[i] > raw_limit) {
      DET_RETURN_IF_ERROR(ReadLongCurve(tx, trial_ids[i], kind, names, max_points, found));
      continue;
    }
    batch.push_back(trial_ids[i]);
    batch_rows += counts[i];
    if (batch_rows >= kSeriesBatchRows) flush();
  }
  if (!batch.empty()) flush();
  for (int64_t trial : trial_ids) {
    for (const auto& name : names) {
      auto it = found.find({trial, name});
      if (it == found.end()) continue;
      DownsampleToExtremes(it->second, max_points);
      all.push_back(std::move(it->second));
      found.erase(it);
    }
  }
  return all;
}

MetricNames ReadMetricNames(pqxx::work& tx, const std::vector<int64_t>& trial_ids) {
  MetricNames names;
  if (trial_ids.empty()) return names;
  for (const auto& row :
       tx.exec_params("SELECT DISTINCT k.kind, e.key FROM unnest($1::bigint[]) AS t (id)"
                      " CROSS JOIN unnest(ARRAY['training', 'validation']) AS k (kind)"
                      " CROSS JOIN LATERAL (SELECT metrics FROM metrics m WHERE m.trial_id = t.id"
                      " AND m.kind = k.kind ORDER BY m.step DESC LIMIT 1) AS latest"
                      " CROSS JOIN LATERAL jsonb_each(latest.metrics) AS e"
                      " WHERE jsonb_typeof(e.value) = 'number' ORDER BY 1, 2",
                      BigintArray(trial_ids))) {
    names[row[0].as<std::string>()].push_back(row[1].as<std::string>());
  }
  return names;
}

}  // namespace det::storage
