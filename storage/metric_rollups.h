#pragma once

// The metric rollups (migration 0010): per trial, kind and step range, each metric's extremes,
// so that a chart of a 1M-point curve reads a few thousand rows. Writers fold what they insert;
// ReadMetricCurve (telemetry_repo.h) reads them.

#include <cstdint>
#include <pqxx/pqxx>
#include <string>
#include <vector>

namespace det::storage {

// Rollup levels 1..kRollupLevels; level l's buckets span 32^l steps (bucket = step >> 5l).
inline constexpr int kRollupLevels = 4;
inline constexpr int kRollupShift = 5;

// A top-level number of a reported metrics object: its name, its value, and its text as reported.
struct MetricNumber {
  std::string name;
  double value = 0;
  std::string text;
};

// The finite top-level numbers of a reported object, in order; none when it is not an object.
std::vector<MetricNumber> NumbersOf(const std::string& metrics_json);

// One metric's lowest and highest value and their steps, as the fold keeps them per bucket and
// the curve read per step range; on a tie the earlier step wins. `Text` is the value's text as
// reported (decimal text as it was, so PostgreSQL compares numbers exactly): a pointer into
// parsed points in the fold, a copy in the read.
template <typename Text>
struct MetricExtremes {
  int64_t min_step = 0, max_step = 0;
  double min = 0, max = 0;
  Text min_text{}, max_text{};
  bool has_min = false, has_max = false;

  void OfferLow(int64_t step, double value, const Text& text) {
    if (has_min && !(value < min || (value == min && step < min_step))) return;
    min_step = step, min = value, min_text = text, has_min = true;
  }
  void OfferHigh(int64_t step, double value, const Text& text) {
    if (has_max && !(value > max || (value == max && step < max_step))) return;
    max_step = step, max = value, max_text = text, has_max = true;
  }
  void Offer(int64_t step, double value, const Text& text) {
    OfferLow(step, value, text);
    OfferHigh(step, value, text);
  }
  void Merge(const MetricExtremes& other) {
    if (other.has_min) OfferLow(other.min_step, other.min, other.min_text);
    if (other.has_max) OfferHigh(other.max_step, other.max, other.max_text);
  }
};

// One stored point, as the fold sees it.
struct FoldedPoint {
  int64_t step = 0;
  const std::string* metrics_json = nullptr;  // the reported object; numbers are folded
};

// Folds points of one trial and kind into every level (one statement). Every writer of `metrics`
// calls it in the transaction that inserted them, once per point (never for a point that was
// already stored).
void FoldMetrics(pqxx::work& tx, int64_t trial_id, const std::string& kind,
                 const std::vector<FoldedPoint>& points);

}  // namespace det::storage
