#pragma once

// The metric rollups (migration 0010): per trial, kind and step range, each metric's extremes,
// so that a chart of a 1M-point curve reads a few thousand rows. Writers fold what they insert;
// ReadMetricCurve and ReadMetricSeries (metrics_repo.h) read them.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <vector>

namespace det::storage {

// Rollup levels 1..kRollupLevels; level l's buckets span 32^l steps (bucket = step >> 5l).
inline constexpr int kRollupLevels = 4;
inline constexpr int kRollupShift = 5;

// The `ranges` equal step ranges of a curve over [first, last] (first <= last), into which both
// curve reads (metrics_repo.h) cut a long curve, keeping each range's extremes.
class StepRanges {
 public:
  StepRanges(int64_t first, int64_t last, size_t ranges)
      : first_(first),
        last_(last),
        span_(static_cast<long double>(last - first) + 1),
        ranges_(ranges == 0 ? 1 : ranges) {}
  // The range `step` falls in (0..size()-1); nullopt outside [first, last].
  std::optional<size_t> Of(int64_t step) const {
    if (step < first_ || step > last_) return std::nullopt;
    const auto range = static_cast<size_t>(static_cast<long double>(step - first_) *
                                           static_cast<long double>(ranges_) / span_);
    return std::min(range, ranges_ - 1);
  }
  size_t size() const { return ranges_; }

 private:
  int64_t first_, last_;
  long double span_;
  size_t ranges_;
};

// The finest rollup level (1..kRollupLevels) whose buckets over [first, last] number at most
// `buckets`; the coarsest when none does.
int RollupLevelFor(int64_t first, int64_t last, int64_t buckets);

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
