#include <algorithm>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>

#include "storage/metric_rollups.h"
#include "storage/metrics_repo.h"
#include "storage/sql_support.h"

namespace det::storage {

void DownsampleToExtremes(MetricSeries& series, int max_points) {
  const size_t n = series.steps.size();
  if (max_points < 2 || n <= static_cast<size_t>(max_points)) return;
  const StepRanges ranges(series.steps.front(), series.steps.back(),
                          static_cast<size_t>(std::max(1, max_points / 2)));
  std::vector<MetricExtremes<size_t>> extremes(ranges.size());  // the points' indexes
  for (size_t i = 0; i < n; ++i) {
    extremes[*ranges.Of(series.steps[i])].Offer(series.steps[i], series.values[i], i);
  }
  std::vector<size_t> kept{0, n - 1};
  for (const MetricExtremes<size_t>& e : extremes) {
    if (e.has_min) kept.push_back(e.min_text);
    if (e.has_max) kept.push_back(e.max_text);
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

// Each value once, in the order first given.
template <typename T>
std::vector<T> Unique(const std::vector<T>& values) {
  std::vector<T> unique;
  for (const auto& v : values) {
    if (std::find(unique.begin(), unique.end(), v) == unique.end()) unique.push_back(v);
  }
  return unique;
}

// What one query tells of a trial's curve before it is read.
struct CurveShape {
  int64_t count = 0;  // counted no further than the cap + 1
  int64_t first_step = 0, last_step = 0;
  std::string first_json, last_json;  // the first and last points, whole
};

// Each trial's curve shape, in the given order: its number of points (as its rollups counted
// them, one probe; else counted up to `cap` + 1) and its first and last points.
std::vector<CurveShape> ShapesOf(pqxx::work& tx, const std::vector<int64_t>& trial_ids,
                                 const std::string& kind, int64_t cap) {
  std::vector<CurveShape> shapes;
  shapes.reserve(trial_ids.size());
  for (const auto& row : tx.exec_params(
           "SELECT coalesce((SELECT sum(r.points) FROM metric_rollups r WHERE r.trial_id = t.id"
           " AND r.kind = $2 AND r.level = 4), (SELECT count(*) FROM (SELECT 1 FROM metrics m"
           " WHERE m.trial_id = t.id AND m.kind = $2 LIMIT $3) AS s))::bigint,"
           " f.step, f.metrics::text, l.step, l.metrics::text"
           " FROM unnest($1::bigint[]) WITH ORDINALITY AS t (id, ord)"
           " LEFT JOIN LATERAL (SELECT step, metrics FROM metrics m WHERE m.trial_id = t.id"
           " AND m.kind = $2 ORDER BY m.step LIMIT 1) AS f ON true"
           " LEFT JOIN LATERAL (SELECT step, metrics FROM metrics m WHERE m.trial_id = t.id"
           " AND m.kind = $2 ORDER BY m.step DESC LIMIT 1) AS l ON true ORDER BY t.ord",
           BigintArray(trial_ids), kind, cap + 1)) {
    CurveShape shape;
    if (!row[1].is_null()) {
      shape = {row[0].as<int64_t>(), row[1].as<int64_t>(), row[3].as<int64_t>(),
               row[2].as<std::string>(), row[4].as<std::string>()};
    }
    shapes.push_back(std::move(shape));
  }
  return shapes;
}

void Append(SeriesMap& found, int64_t trial, const std::string& name, int64_t step, double value) {
  MetricSeries& series = found[{trial, name}];
  series.trial_id = trial;
  series.name = name;
  series.steps.push_back(step);
  series.values.push_back(value);
}

// Every numeric value of `name` of these trials' points, into `found`.
void ReadWholeCurves(pqxx::work& tx, const std::vector<int64_t>& trial_ids, const std::string& kind,
                     const std::string& name, SeriesMap& found) {
  for (const auto& row :
       tx.exec_params("SELECT trial_id, step, metrics->>$3 FROM metrics WHERE trial_id ="
                      " ANY($1::bigint[]) AND kind = $2 AND jsonb_typeof(metrics->$3) = 'number'"
                      " ORDER BY trial_id, step",
                      BigintArray(trial_ids), kind, name)) {
    Append(found, row[0].as<int64_t>(), name, row[1].as<int64_t>(),
           std::strtod(row[2].c_str(), nullptr));
  }
}

// These trials' rollup extremes of `name` at one level (each bucket's lowest and highest value
// at their steps), into `found`, unordered.
void ReadRollupExtremes(pqxx::work& tx, const std::vector<int64_t>& trial_ids,
                        const std::string& kind, const std::string& name, int level,
                        SeriesMap& found) {
  for (const auto& row :
       tx.exec_params("SELECT trial_id, (extremes->$3)::text FROM metric_rollups WHERE trial_id ="
                      " ANY($1::bigint[]) AND kind = $2 AND level = $4 AND extremes ? $3",
                      BigintArray(trial_ids), kind, name, level)) {
    const auto e = nlohmann::json::parse(row[1].c_str(), nullptr, false);
    if (!e.is_array() || e.size() != 4 || !e[0].is_number_integer() || !e[1].is_number() ||
        !e[2].is_number_integer() || !e[3].is_number()) {
      continue;
    }
    const int64_t trial = row[0].as<int64_t>();
    Append(found, trial, name, e[0].get<int64_t>(), e[1].get<double>());
    Append(found, trial, name, e[2].get<int64_t>(), e[3].get<double>());
  }
}

// A whole point's numeric value of `name`, into `found`.
void AppendFromPoint(SeriesMap& found, int64_t trial, const std::string& name, int64_t step,
                     const nlohmann::json& metrics) {
  if (!metrics.is_object()) return;
  const auto value = metrics.find(name);
  if (value != metrics.end() && value->is_number()) {
    Append(found, trial, name, step, value->get<double>());
  }
}

// Sorts a series gathered out of order by step, one value per step.
void SortByStep(MetricSeries& series) {
  std::vector<size_t> order(series.steps.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return series.steps[a] < series.steps[b]; });
  MetricSeries sorted{series.trial_id, series.name, {}, {}, series.downsampled};
  for (size_t i : order) {
    if (!sorted.steps.empty() && sorted.steps.back() == series.steps[i]) continue;
    sorted.steps.push_back(series.steps[i]);
    sorted.values.push_back(series.values[i]);
  }
  series = std::move(sorted);
}

// Long curves from the rollups, grouped by level (one query per level and name), each with its
// first and last points whole; marked downsampled.
void ReadFromRollups(pqxx::work& tx, const std::map<int, std::vector<int64_t>>& by_level,
                     const std::map<int64_t, const CurveShape*>& shapes, const std::string& kind,
                     const std::vector<std::string>& names, SeriesMap& found) {
  for (const auto& [level, trials] : by_level) {
    // Each trial's first and last points, parsed once for every name.
    std::vector<std::pair<nlohmann::json, nlohmann::json>> ends;
    ends.reserve(trials.size());
    for (int64_t trial : trials) {
      const CurveShape& shape = *shapes.at(trial);
      ends.emplace_back(nlohmann::json::parse(shape.first_json, nullptr, false),
                        nlohmann::json::parse(shape.last_json, nullptr, false));
    }
    for (const auto& name : names) {
      SeriesMap read;
      ReadRollupExtremes(tx, trials, kind, name, level, read);
      for (size_t i = 0; i < trials.size(); ++i) {
        const CurveShape& shape = *shapes.at(trials[i]);
        AppendFromPoint(read, trials[i], name, shape.first_step, ends[i].first);
        AppendFromPoint(read, trials[i], name, shape.last_step, ends[i].second);
      }
      for (auto& [key, series] : read) {
        SortByStep(series);
        series.downsampled = true;
        found[key] = std::move(series);
      }
    }
  }
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
  const std::vector<int64_t> trials = Unique(trial_ids);
  const std::vector<std::string> wanted = Unique(names);
  if (trials.empty() || wanted.empty()) return all;
  const std::vector<CurveShape> shapes = ShapesOf(
      tx, trials, kind, std::min({int64_t{max_points} * 16, kMetricCurveRawLimit, kSeriesRawRows}));
  const int64_t curves =
      static_cast<int64_t>(wanted.size()) *
      std::count_if(shapes.begin(), shapes.end(), [](const CurveShape& s) { return s.count > 0; });
  if (curves == 0) return all;
  // The curves share the answer's budget. Each is read whole while the rows read (once per name)
  // stay within kSeriesRawRows, shortest curves first; the others from the rollups.
  const int per_curve = static_cast<int>(std::clamp<int64_t>(
      kSeriesPointBudget / curves, std::min(max_points, kSeriesMinCurvePoints), max_points));
  const int64_t raw_limit = std::min(int64_t{per_curve} * 16, kMetricCurveRawLimit);
  std::vector<size_t> shortest_first(trials.size());
  for (size_t i = 0; i < trials.size(); ++i) shortest_first[i] = i;
  std::stable_sort(shortest_first.begin(), shortest_first.end(),
                   [&](size_t a, size_t b) { return shapes[a].count < shapes[b].count; });
  SeriesMap found;
  std::map<int64_t, const CurveShape*> shape_of;
  std::map<int, std::vector<int64_t>> from_rollups;  // by level
  std::vector<int64_t> batch;
  int64_t batch_rows = 0, raw_rows = 0;
  auto flush = [&] {
    for (const auto& name : wanted) ReadWholeCurves(tx, batch, kind, name, found);
    for (auto& [key, series] : found) DownsampleToExtremes(series, per_curve);  // bounds memory
    batch.clear();
    batch_rows = 0;
  };
  for (size_t i : shortest_first) {
    const CurveShape& shape = shapes[i];
    if (shape.count == 0) continue;
    shape_of[trials[i]] = &shape;
    const int64_t rows = shape.count * static_cast<int64_t>(wanted.size());
    if (shape.count > raw_limit || raw_rows + rows > kSeriesRawRows) {
      from_rollups[RollupLevelFor(shape.first_step, shape.last_step, 2 * per_curve)].push_back(
          trials[i]);
      continue;
    }
    batch.push_back(trials[i]);
    batch_rows += rows;
    raw_rows += rows;
    if (batch_rows >= kSeriesBatchRows) flush();
  }
  if (!batch.empty()) flush();
  ReadFromRollups(tx, from_rollups, shape_of, kind, wanted, found);
  for (int64_t trial : trials) {
    for (const auto& name : wanted) {
      auto it = found.find({trial, name});
      if (it == found.end()) continue;
      DownsampleToExtremes(it->second, per_curve);
      all.push_back(std::move(it->second));
      found.erase(it);
    }
  }
  return all;
}

void FillReportTimes(pqxx::work& tx, const std::string& kind, std::vector<MetricSeries>& series) {
  std::vector<int64_t> trials, steps;
  for (const MetricSeries& s : series) {
    for (int64_t step : s.steps) {
      trials.push_back(s.trial_id);
      steps.push_back(step);
    }
  }
  std::map<std::pair<int64_t, int64_t>, int64_t> reported;  // (trial, step) -> ns
  if (!trials.empty()) {
    for (const auto& row : tx.exec_params(
             "SELECT m.trial_id, m.step, det_ns(m.reported_at) FROM unnest($1::bigint[],"
             " $2::bigint[]) AS p (trial_id, step) JOIN metrics m ON m.trial_id = p.trial_id"
             " AND m.kind = $3 AND m.step = p.step",
             BigintArray(trials), BigintArray(steps), kind)) {
      reported[{row[0].as<int64_t>(), row[1].as<int64_t>()}] = row[2].as<int64_t>();
    }
  }
  for (MetricSeries& s : series) {
    s.times.clear();
    for (int64_t step : s.steps) {
      const auto it = reported.find({s.trial_id, step});
      s.times.push_back(it == reported.end() ? 0 : it->second);
    }
  }
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
