#include "storage/metric_rollups.h"

#include <charconv>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <string_view>

namespace det::storage {
namespace {

using nlohmann::json;

// Collects the top-level numbers of a reported object without building it (nlohmann's SAX
// interface). The general path: FlatNumbers below takes the common shape first.
class TopLevelNumbers : public nlohmann::json_sax<json> {
 public:
  explicit TopLevelNumbers(std::vector<MetricNumber>& out) : out_(out) {}
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t v) override {
    return Add(static_cast<double>(v), std::to_string(v));
  }
  bool number_unsigned(number_unsigned_t v) override {
    return Add(static_cast<double>(v), std::to_string(v));
  }
  bool number_float(number_float_t v, const string_t& text) override { return Add(v, text); }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return ++depth_, true; }
  bool end_object() override { return --depth_, true; }
  bool start_array(std::size_t) override { return ++depth_, true; }
  bool end_array() override { return --depth_, true; }
  bool key(string_t& k) override {
    if (depth_ == 1) key_ = k;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    out_.clear();  // not JSON: nothing to fold
    return false;
  }

 private:
  bool Add(double value, const std::string& text) {
    if (depth_ == 1 && std::isfinite(value)) out_.push_back({key_, value, text});
    return true;
  }
  std::vector<MetricNumber>& out_;
  int depth_ = 0;
  std::string key_;
};

// The common report, a flat object of plain-named numbers ({"loss": 0.25, "batches": 12}), read
// with from_chars: several times faster than any general JSON parser, which made the fold cost
// as much as the COPY it follows. False (and `out` unspecified) for anything else: escapes in a
// name, strings, nesting, non-JSON numbers.
bool FlatNumbers(std::string_view text, std::vector<MetricNumber>& out) {
  size_t at = 0;
  auto skip_space = [&] {
    while (at < text.size() &&
           (text[at] == ' ' || text[at] == '\n' || text[at] == '\t' || text[at] == '\r')) {
      ++at;
    }
  };
  auto expect = [&](char c) {
    skip_space();
    if (at >= text.size() || text[at] != c) return false;
    ++at;
    return true;
  };
  if (!expect('{')) return false;
  skip_space();
  if (at < text.size() && text[at] == '}') return true;
  while (true) {
    if (!expect('"')) return false;
    const size_t name_end = text.find('"', at);
    if (name_end == std::string_view::npos) return false;
    const std::string_view name = text.substr(at, name_end - at);
    if (name.find('\\') != std::string_view::npos) return false;
    at = name_end + 1;
    if (!expect(':')) return false;
    skip_space();
    const size_t start = at;
    while (at < text.size() &&
           std::string_view("+-.0123456789eE").find(text[at]) != std::string_view::npos) {
      ++at;
    }
    const std::string_view number = text.substr(start, at - start);
    if (number.empty() || number[0] == '+') return false;
    double value = 0;
    if (std::from_chars(number.data(), number.data() + number.size(), value).ptr !=
        number.data() + number.size()) {
      return false;
    }
    if (std::isfinite(value)) out.push_back({std::string(name), value, std::string(number)});
    skip_space();
    if (at < text.size() && text[at] == ',') {
      ++at;
      continue;
    }
    return expect('}') && (skip_space(), at == text.size());
  }
}

// One metric's extremes in one bucket. Values point into the parsed points, which outlive it.
using Extremes = MetricExtremes<const std::string*>;

// As [min_step, min, max_step, max], the values as reported.
void AppendExtremesJson(const Extremes& e, std::string& out) {
  out += '[' + std::to_string(e.min_step) + ',' + *e.min_text + ',' + std::to_string(e.max_step) +
         ',' + *e.max_text + ']';
}

struct Bucket {
  int64_t points = 0;
  std::map<std::string_view, Extremes> metrics;  // names point into the parsed points

  void Add(const Bucket& other) {
    points += other.points;
    for (const auto& [name, e] : other.metrics) metrics[name].Merge(e);
  }
};

// Level 1's buckets from the points themselves; each level above from the one below.
std::vector<std::map<int64_t, Bucket>> Levels(
    const std::vector<FoldedPoint>& points, const std::vector<std::vector<MetricNumber>>& parsed) {
  std::vector<std::map<int64_t, Bucket>> levels(kRollupLevels);
  for (size_t i = 0; i < points.size(); ++i) {
    Bucket& bucket = levels[0][points[i].step >> kRollupShift];
    ++bucket.points;
    for (const MetricNumber& number : parsed[i]) {
      bucket.metrics[number.name].Offer(points[i].step, number.value, &number.text);
    }
  }
  for (int level = 1; level < kRollupLevels; ++level) {
    for (const auto& [bucket, below] : levels[level - 1]) {
      levels[level][bucket >> kRollupShift].Add(below);
    }
  }
  return levels;
}

}  // namespace

int RollupLevelFor(int64_t first, int64_t last, int64_t buckets) {
  int level = 1;
  while (level < kRollupLevels &&
         (last >> (kRollupShift * level)) - (first >> (kRollupShift * level)) + 1 > buckets) {
    ++level;
  }
  return level;
}

std::vector<MetricNumber> NumbersOf(const std::string& metrics_json) {
  std::vector<MetricNumber> numbers;
  if (FlatNumbers(metrics_json, numbers)) return numbers;
  numbers.clear();
  TopLevelNumbers collect(numbers);
  json::sax_parse(metrics_json, &collect);
  return numbers;
}

void FoldMetrics(pqxx::work& tx, int64_t trial_id, const std::string& kind,
                 const std::vector<FoldedPoint>& points) {
  if (points.empty()) return;
  std::vector<std::vector<MetricNumber>> parsed;
  parsed.reserve(points.size());
  for (const auto& point : points) parsed.push_back(NumbersOf(*point.metrics_json));
  // [{"level", "bucket", "points", "extremes": {name: [...]}}, ...] as JSON text.
  std::string rows = "[";
  const auto levels = Levels(points, parsed);
  for (int level = 1; level <= kRollupLevels; ++level) {
    for (const auto& [key, bucket] : levels[level - 1]) {
      if (rows.size() > 1) rows += ',';
      rows += "{\"level\":" + std::to_string(level) + ",\"bucket\":" + std::to_string(key) +
              ",\"points\":" + std::to_string(bucket.points) + ",\"extremes\":{";
      bool first = true;
      for (const auto& [name, e] : bucket.metrics) {
        if (!first) rows += ',';
        first = false;
        rows += json(name).dump() + ':';
        AppendExtremesJson(e, rows);
      }
      rows += "}}";
    }
  }
  rows += ']';
  tx.exec_params(
      "INSERT INTO metric_rollups AS r (trial_id, kind, level, bucket, points, extremes)"
      " SELECT $1, $2, u.level, u.bucket, u.points, u.extremes FROM jsonb_to_recordset($3::jsonb)"
      " AS u (level smallint, bucket bigint, points bigint, extremes jsonb)"
      " ON CONFLICT (trial_id, kind, level, bucket) DO UPDATE"
      " SET points = r.points + excluded.points,"
      " extremes = det_merge_extremes(r.extremes, excluded.extremes)",
      trial_id, kind, rows);
}

}  // namespace det::storage
