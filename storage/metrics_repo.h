#pragma once

// A trial's metrics: single points as the Core API reports them, paged reads by step, one curve
// for a chart (ReadMetricCurve), and many trials' curves of a few named metrics at once for
// charts that overlay them (ReadMetricSeries, metric_series.cc). Both curve reads cut a long
// curve to each step range's extremes (metric_rollups.h: StepRanges), from the points or, past a
// bound, from the rollups (RollupLevelFor), so their cost does not grow with the curve.
//
// Functions take the caller's transaction (Database::Run).

#include <cstdint>
#include <map>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "common/status.h"
#include "storage/ingest_writer.h"

namespace det::storage {

// Points of one kind ("training" | "validation") with step > after_step, by step, at most `limit`,
// with the times they were stored.
std::vector<MetricPoint> ReadMetrics(pqxx::work& tx, int64_t trial_id, const std::string& kind,
                                     int64_t after_step, int limit);

// Stores one point; false when (trial, kind, step) was already stored (a report sent again).
bool RecordMetric(pqxx::work& tx, const MetricPoint& point);

// A curve of at most about `max_points` values per metric, for a chart: every point when there
// are no more than that after `after_step`; else, per metric, the lowest and highest value in
// each of max_points / 2 equal step ranges, plus the first and last points whole. Up to 16 x
// max_points points (and never more than kMetricCurveRawLimit) the ranges are cut from the
// points; beyond, from the rollups (the finest
// level with at most 8 buckets per range), whose cost does not grow with the curve. There a
// bucket cut by after_step offers only those of its extremes after it.
inline constexpr int kMetricCurveMaxPoints = 20000;
inline constexpr int64_t kMetricCurveRawLimit = 65536;
struct MetricCurve {
  std::vector<MetricPoint> points;  // by step
  bool downsampled = false;
};
Result<MetricCurve> ReadMetricCurve(pqxx::work& tx, int64_t trial_id, const std::string& kind,
                                    int64_t after_step, int max_points);

// One trial's values of one metric, by step. Non-numeric values (strings, null) are left out.
struct MetricSeries {
  int64_t trial_id = 0;
  std::string name;
  std::vector<int64_t> steps;
  std::vector<double> values;
  bool downsampled = false;    // max_points cut the curve down to its extremes
  std::vector<int64_t> times;  // when each point was reported (Unix ns): FillReportTimes only
};

// Keeps the first and last points and, in each of max_points / 2 equal step ranges of the
// curve, its lowest and highest value (a spike survives, as in ReadMetricCurve). A curve of at
// most max_points points is kept whole. `steps` ascend.
void DownsampleToExtremes(MetricSeries& series, int max_points);

// For each trial (in the order given) and each name, the trial's `kind` ("training" |
// "validation") values of that metric, cut to each range's extremes (DownsampleToExtremes). A
// trial or name with no numeric value gives no series; a trial or name asked for twice comes
// once.
//
// The answer's size and cost are bounded whatever the search: its curves (trials x names) share
// kSeriesPointBudget values (each gets max_points, 2..kMetricCurveMaxPoints, or that budget's
// share, at least kSeriesMinCurvePoints; so at most kSeriesMinCurvePoints x curves when there
// are very many). Curves are read whole, shortest first, in a few queries for all trials together
// and only the named metric's value, while the rows read stay within kSeriesRawRows; the others
// come from the rollups (the finest level with at most two buckets per value wanted), one query
// per level and name, with their first and last points exact when those points carry the metric.
// So 500 trials of 1,000 points cost about as much as 50, and a 1M-point trial as much as a short
// one. Memory: one batch of about kSeriesBatchRows rows at a time.
inline constexpr int64_t kSeriesPointBudget = 50000;
inline constexpr int kSeriesMinCurvePoints = 50;
inline constexpr int64_t kSeriesRawRows = 20000;
inline constexpr int64_t kSeriesBatchRows = 50000;
Result<std::vector<MetricSeries>> ReadMetricSeries(pqxx::work& tx,
                                                   const std::vector<int64_t>& trial_ids,
                                                   const std::string& kind,
                                                   const std::vector<std::string>& names,
                                                   int max_points);

// Sets each series' `times`: when each of its points was reported (one query for all of them,
// by the metrics' primary key). A point no longer stored gets 0.
void FillReportTimes(pqxx::work& tx, const std::string& kind, std::vector<MetricSeries>& series);

// The numeric metric names of these trials' latest training and validation points, per kind
// ("training" -> names, sorted): what a chart can offer to draw. Two index probes per trial.
using MetricNames = std::map<std::string, std::vector<std::string>>;
MetricNames ReadMetricNames(pqxx::work& tx, const std::vector<int64_t>& trial_ids);

}  // namespace det::storage
