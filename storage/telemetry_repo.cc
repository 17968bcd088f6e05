#include "storage/telemetry_repo.h"

#include <algorithm>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>

#include "storage/log_chunk.h"
#include "storage/metric_rollups.h"
#include "storage/sql_support.h"

namespace det::storage {

std::vector<MetricPoint> ReadMetrics(pqxx::work& tx, int64_t trial_id, const std::string& kind,
                                     int64_t after_step, int limit) {
  std::vector<MetricPoint> points;
  for (const auto& row :
       tx.exec_params("SELECT trial_id, kind, step, run_id, metrics::text FROM metrics"
                      " WHERE trial_id = $1 AND kind = $2 AND step > $3 ORDER BY step LIMIT $4",
                      trial_id, kind, after_step, limit)) {
    points.push_back({row[0].as<int64_t>(), row[1].as<std::string>(), row[2].as<int64_t>(),
                      row[3].as<int32_t>(), row[4].as<std::string>()});
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

// Per step range (`ranges` equal parts of [first, last]), per metric, the lowest and the highest
// value offered.
class RangeExtremes {
 public:
  using Extremes = MetricExtremes<std::string>;

  RangeExtremes(int64_t first, int64_t last, int64_t ranges)
      : first_(first),
        last_(last),
        span_(static_cast<long double>(last - first) + 1),
        ranges_(static_cast<size_t>(ranges)) {}

  // A value at `step` as a candidate for its range's minimum (`low`) and/or maximum (`high`).
  void Offer(const std::string& name, int64_t step, double value, const std::string& reported,
             bool low, bool high) {
    if (step < first_ || step > last_) return;
    const auto range =
        std::min(static_cast<size_t>(static_cast<long double>(step - first_) *
                                     static_cast<long double>(ranges_.size()) / span_),
                 ranges_.size() - 1);
    Extremes& e = ranges_[range][name];
    if (low) e.OfferLow(step, value, reported);
    if (high) e.OfferHigh(step, value, reported);
  }

  const std::vector<std::map<std::string, Extremes>>& ranges() const { return ranges_; }

 private:
  int64_t first_, last_;
  long double span_;
  std::vector<std::map<std::string, Extremes>> ranges_;
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
  int shift = kRollupShift;
  for (int level = 1; level < kRollupLevels && (last >> shift) - (first >> shift) + 1 > 8 * ranges;
       ++level) {
    shift += kRollupShift;
  }
  for (const auto& row :
       tx.exec_params("SELECT extremes::text FROM metric_rollups WHERE trial_id = $1 AND kind = $2"
                      " AND level = $3 AND bucket BETWEEN $4 AND $5 ORDER BY bucket",
                      trial_id, kind, shift / kRollupShift, first >> shift, last >> shift)) {
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

namespace {

// Chunks of a task per query, in id order (`newest_first`: descending) from `from_chunk`
// (inclusive); at most `count`.
pqxx::result SelectChunks(pqxx::work& tx, const std::string& task_id, const LogQuery& query,
                          int64_t from_chunk, bool newest_first, int count) {
  const std::string sql = std::string(
                              "SELECT id, agent_id, codec, data, line_count FROM task_log_chunks"
                              " WHERE task_id = $1 AND id ") +
                          (newest_first ? "<= $2" : ">= $2") +
                          " AND ($3::bigint IS NULL OR last_ts >= det_ts($3))"
                          " AND ($4::bigint IS NULL OR first_ts < det_ts($4 + 999))"
                          " ORDER BY id " +
                          (newest_first ? "DESC" : "ASC") + " LIMIT $5";
  return tx.exec_params(sql, task_id, from_chunk, query.since_ns, query.until_ns, count);
}

// The lines of one chunk row that the query selects, in order.
Result<std::vector<StoredLogLine>> ChunkLines(const pqxx::row& row, const std::string& task_id,
                                              const LogQuery& query) {
  const int64_t chunk_id = row[0].as<int64_t>();
  auto data = BytesColumn(row[3]);
  auto decoded = DecodeLogChunk(static_cast<ChunkCodec>(row[2].as<int>()), data.value_or(""));
  if (!decoded.ok()) {
    return Internal("task " + task_id + ", log chunk " + std::to_string(chunk_id) + ": " +
                    decoded.status().message());
  }
  std::vector<StoredLogLine> lines;
  lines.reserve(decoded->size());
  const std::string agent_id = row[1].as<std::string>();
  for (size_t i = 0; i < decoded->size(); ++i) {
    LogLine& line = (*decoded)[i];
    const int64_t id = LogLineId(chunk_id, i);
    if (!query.Selects(id, line.timestamp_ns)) continue;
    line.agent_id = agent_id;
    lines.push_back({id, std::move(line)});
  }
  return lines;
}

// Chunks are read a few at a time: enough for a page of short lines in one round trip.
constexpr int kChunksPerRead = 8;

}  // namespace

Result<std::vector<StoredLogLine>> ReadTaskLogs(pqxx::work& tx, const std::string& task_id,
                                                const LogQuery& query, int limit) {
  std::vector<StoredLogLine> lines;
  size_t bytes = 0;
  int64_t from_chunk = std::max<int64_t>(query.after_id, 0) / kChunkIdScale;
  while (static_cast<int>(lines.size()) < limit) {
    const pqxx::result rows = SelectChunks(tx, task_id, query, from_chunk, false, kChunksPerRead);
    for (const auto& row : rows) {
      DET_ASSIGN_OR_RETURN(std::vector<StoredLogLine> chunk, ChunkLines(row, task_id, query));
      for (auto& line : chunk) {
        if (static_cast<int>(lines.size()) == limit || bytes >= kMaxLogPageBytes) return lines;
        bytes += line.line.log.size();
        lines.push_back(std::move(line));
      }
      from_chunk = row[0].as<int64_t>() + 1;
    }
    if (rows.size() < static_cast<size_t>(kChunksPerRead)) break;
  }
  return lines;
}

Result<std::vector<StoredLogChunk>> ReadTaskLogChunks(pqxx::work& tx, const std::string& task_id,
                                                      const LogQuery& query, int64_t min_lines) {
  std::vector<StoredLogChunk> chunks;
  int64_t lines = 0;
  size_t bytes = 0;
  int64_t from_chunk = std::max<int64_t>(query.after_id, 0) / kChunkIdScale;
  while (lines < min_lines && bytes < kMaxLogPageBytes) {
    const pqxx::result rows = SelectChunks(tx, task_id, query, from_chunk, false, kChunksPerRead);
    for (const auto& row : rows) {
      from_chunk = row[0].as<int64_t>() + 1;
      StoredLogChunk chunk{row[0].as<int64_t>(), row[1].as<std::string>(),
                           static_cast<ChunkCodec>(row[2].as<int>()),
                           BytesColumn(row[3]).value_or(""), row[4].as<int64_t>()};
      if (LogLineId(chunk.id, static_cast<size_t>(chunk.line_count)) - 1 <= query.after_id) {
        continue;  // read to its end already
      }
      lines += chunk.line_count;
      bytes += chunk.data.size();
      chunks.push_back(std::move(chunk));
      if (lines >= min_lines || bytes >= kMaxLogPageBytes) return chunks;
    }
    if (rows.size() < static_cast<size_t>(kChunksPerRead)) break;
  }
  return chunks;
}

Result<TailStart> TaskLogTailStart(pqxx::work& tx, const std::string& task_id,
                                   const LogQuery& query, int64_t count) {
  TailStart start{std::max<int64_t>(query.after_id, 0), 0};
  const bool by_time = query.since_ns || query.until_ns;
  int64_t to_chunk = std::numeric_limits<int64_t>::max();
  while (start.lines < count) {
    const pqxx::result rows = SelectChunks(tx, task_id, query, to_chunk, true, kChunksPerRead);
    for (const auto& row : rows) {
      const int64_t chunk_id = row[0].as<int64_t>();
      to_chunk = chunk_id - 1;
      // The ids of the chunk's selected lines, oldest first.
      std::vector<int64_t> ids;
      if (by_time || chunk_id * kChunkIdScale <= query.after_id) {
        DET_ASSIGN_OR_RETURN(std::vector<StoredLogLine> lines, ChunkLines(row, task_id, query));
        for (const auto& line : lines) ids.push_back(line.id);
      } else {
        const int64_t line_count = row[4].as<int64_t>();
        for (int64_t i = 0; i < line_count; ++i) ids.push_back(chunk_id * kChunkIdScale + i);
      }
      const int64_t wanted = count - start.lines;
      if (static_cast<int64_t>(ids.size()) >= wanted) {
        start.lines = count;
        start.after_id = ids[ids.size() - wanted] - 1;
        return start;
      }
      start.lines += static_cast<int64_t>(ids.size());
      if (!ids.empty()) start.after_id = ids.front() - 1;
    }
    if (rows.size() < static_cast<size_t>(kChunksPerRead)) break;
  }
  return start;
}

int64_t DeleteExpiredLogs(pqxx::work& tx, int default_days, int64_t now_ns) {
  return tx
      .exec_params1(
          "WITH expired AS ("
          "  SELECT t.id FROM tasks t"
          "  LEFT JOIN trials tr ON tr.id = t.trial_id"
          "  LEFT JOIN experiments e ON e.id = tr.experiment_id"
          "  WHERE t.end_time IS NOT NULL AND coalesce(e.log_retention_days, $1) >= 0"
          "    AND t.end_time <= det_ts($2) - make_interval(days => coalesce(e.log_retention_days,"
          "                                                                  $1))),"
          " gone AS (DELETE FROM task_log_chunks WHERE task_id IN (SELECT id FROM expired)"
          "  RETURNING line_count)"
          " SELECT coalesce(sum(line_count), 0)::bigint FROM gone",
          default_days, now_ns)[0]
      .as<int64_t>();
}

}  // namespace det::storage
