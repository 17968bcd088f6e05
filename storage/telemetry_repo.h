#pragma once

// Reads of what IngestWriter writes: a trial's metrics and a task's log lines, in pages; and the
// Core API's single metric reports.
//
// Functions take the caller's transaction (Database::Run). Times are Unix nanoseconds.

#include <cstdint>
#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "common/status.h"
#include "storage/ingest_writer.h"
#include "storage/log_chunk.h"

namespace det::storage {

// Points of one kind ("training" | "validation") with step > after_step, by step, at most `limit`.
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

// A line as read back: its task and allocation are not filled in (the reader named the task).
struct StoredLogLine {
  int64_t id = 0;  // increases in the order lines were stored: the next page's cursor
  LogLine line;
};

// The first `limit` lines the query selects, oldest first, and no more once their text reaches
// kMaxLogPageBytes (at least one line). Reads chunk by chunk: memory is bounded by the page and a
// chunk, whatever the log's size. A chunk that cannot be decoded is an error naming it.
inline constexpr size_t kMaxLogPageBytes = 4 << 20;
Result<std::vector<StoredLogLine>> ReadTaskLogs(pqxx::work& tx, const std::string& task_id,
                                                const LogQuery& query, int limit);

// A stored chunk as it is, for a client that decodes it itself (det: DecodeLogChunk, then
// LogQuery::Selects per line).
struct StoredLogChunk {
  int64_t id = 0;
  std::string agent_id;
  ChunkCodec codec = ChunkCodec::kDeflate;
  std::string data;
  int64_t line_count = 0;
};

// The chunks that hold the first lines the query selects, oldest first, until they hold at least
// `min_lines` lines or kMaxLogPageBytes of stored bytes (at least one chunk). A chunk may also hold
// lines the query does not select; none holds only lines at or before after_id.
Result<std::vector<StoredLogChunk>> ReadTaskLogChunks(pqxx::work& tx, const std::string& task_id,
                                                      const LogQuery& query, int64_t min_lines);

// Where the last `count` lines the query selects start: the after_id that reads them, and how
// many there are (fewer than `count` when the log is shorter). Counts stored line counts, and
// decodes only chunks a time range cuts.
struct TailStart {
  int64_t after_id = 0;
  int64_t lines = 0;
};
Result<TailStart> TaskLogTailStart(pqxx::work& tx, const std::string& task_id,
                                   const LogQuery& query, int64_t count);

// Determined's log retention: removes the logs of every task that ended at least `days` days
// before `now_ns` (a trial's experiment may set its own days; -1 keeps them forever); how many
// lines went.
int64_t DeleteExpiredLogs(pqxx::work& tx, int default_days, int64_t now_ns);

}  // namespace det::storage
