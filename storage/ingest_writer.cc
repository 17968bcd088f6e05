#include "storage/ingest_writer.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <ctime>
#include <limits>
#include <map>
#include <thread>
#include <tuple>

#include "storage/database.h"
#include "storage/log_chunk.h"
#include "storage/metric_rollups.h"
#include "storage/sql_support.h"

namespace det::storage {
namespace {

const std::vector<std::string> kMetricColumns = {"trial_id", "kind", "step", "run_id", "metrics"};

// The lowest and highest of some source offsets; empty (low > high) when none was added.
struct OffsetRange {
  int64_t low = std::numeric_limits<int64_t>::max();
  int64_t high = std::numeric_limits<int64_t>::min();
  void Add(int64_t offset) {
    low = std::min(low, offset);
    high = std::max(high, offset);
  }
  bool empty() const { return low > high; }
  std::optional<int64_t> Low() const { return empty() ? std::nullopt : std::optional(low); }
  std::optional<int64_t> High() const { return empty() ? std::nullopt : std::optional(high); }
};

void WriteMetricRows(pqxx::work& tx, const void* rows, IngestWriter::Mode mode);
void WriteLogRows(pqxx::work& tx, const void* rows, IngestWriter::Mode mode);

}  // namespace

std::string ValidUtf8(std::string_view text) {
  static constexpr std::string_view kReplacement = "\xEF\xBF\xBD";
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    size_t length = c < 0x80           ? 1
                    : (c >> 5) == 0x6  ? 2
                    : (c >> 4) == 0xE  ? 3
                    : (c >> 3) == 0x1E ? 4
                                       : 0;
    bool valid = length > 0 && c != 0 && i + length <= text.size();
    for (size_t k = 1; valid && k < length; ++k) {
      valid = (static_cast<unsigned char>(text[i + k]) & 0xC0) == 0x80;
    }
    if (valid && length > 1) {  // no overlong forms, surrogates or code points past U+10FFFF
      uint32_t cp = c & (0x7F >> length);
      for (size_t k = 1; k < length; ++k) cp = (cp << 6) | (text[i + k] & 0x3F);
      static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
      valid = cp >= kMin[length] && cp <= 0x10FFFF && (cp < 0xD800 || cp > 0xDFFF);
    }
    if (valid) {
      out.append(text.substr(i, length));
      i += length;
    } else {
      out.append(kReplacement);
      ++i;
    }
  }
  return out;
}

std::string TimestampText(int64_t unix_ns) {
  const std::time_t seconds = static_cast<std::time_t>(unix_ns / 1000000000);
  const int64_t micros = (unix_ns % 1000000000) / 1000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02d %02d:%02d:%02d.%06lld+00", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                static_cast<long long>(micros));
  return buf;
}

IngestWriter::IngestWriter(DbConfig config, int attempts)
    : config_(std::move(config)), attempts_(attempts) {}

Status IngestWriter::WriteMetrics(const std::string& batch_id,
                                  const std::vector<MetricPoint>& points) {
  return WriteBatch({{"metrics/" + batch_id, &points}}, &WriteMetricRows);
}

Status IngestWriter::WriteLogs(const std::string& batch_id, const std::vector<LogLine>& lines) {
  return WriteBatch({{"logs/" + batch_id, &lines}}, &WriteLogRows);
}

Status IngestWriter::WriteLogBatches(const std::vector<LogBatch>& batches) {
  std::vector<std::pair<std::string, const void*>> items;
  items.reserve(batches.size());
  for (const LogBatch& batch : batches) items.emplace_back("logs/" + batch.batch_id, batch.lines);
  return WriteBatch(items, &WriteLogRows);
}

Status IngestWriter::WriteBatch(const std::vector<std::pair<std::string, const void*>>& batches,
                                Rows write) {
  const std::string batch_id =
      batches.size() == 1
          ? batches[0].first
          : batches[0].first + " (and " + std::to_string(batches.size() - 1) + " more)";
  Mode mode = Mode::kCopy;
  Status last;
  for (int attempt = 1; attempt <= attempts_; ++attempt) {
    if (!connection_) {
      auto connected = Connect(config_);
      if (!connected.ok()) {
        last = connected.status();
        std::this_thread::sleep_for(std::chrono::milliseconds(100 * std::min(attempt, 10)));
        continue;
      }
      connection_ = std::move(*connected);
    }
    try {
      pqxx::work tx(*connection_);
      for (const auto& [id, rows] : batches) {
        auto claimed = tx.exec_params(
            "INSERT INTO ingest_batches (batch_id) VALUES ($1) ON CONFLICT DO NOTHING", id);
        if (claimed.affected_rows() == 1) write(tx, rows, mode);  // else: committed before
      }
      tx.commit();
      return Status::Ok();
    } catch (const pqxx::unique_violation&) {
      // Points already stored: write this batch row by row, keeping what is there.
      if (mode == Mode::kRowByRow) return StatusFromException("ingest batch " + batch_id);
      mode = Mode::kRowByRow;
      --attempt;
    } catch (const pqxx::broken_connection&) {
      last = StatusFromException("ingest batch " + batch_id);
      connection_.reset();
      ++reconnects_;
    } catch (const pqxx::in_doubt_error&) {
      last = StatusFromException("ingest batch " + batch_id);
      connection_.reset();  // the retry finds out through the batch id
      ++reconnects_;
    } catch (...) {
      if (connection_ && !connection_->is_open()) {
        last = StatusFromException("ingest batch " + batch_id);
        connection_.reset();
        ++reconnects_;
        continue;
      }
      return StatusFromException("ingest batch " + batch_id);
    }
  }
  return last;
}

namespace {

void WriteMetricRows(pqxx::work& tx, const void* rows, IngestWriter::Mode mode) {
  const auto& points = *static_cast<const std::vector<MetricPoint>*>(rows);
  // The points inserted, per (trial, kind), for the rollups.
  std::map<std::pair<int64_t, std::string>, std::vector<FoldedPoint>> inserted;
  if (mode == IngestWriter::Mode::kRowByRow) {
    for (const auto& p : points) {
      if (!tx.exec_params(
                 "INSERT INTO metrics (trial_id, kind, step, run_id, metrics) VALUES ($1, $2, $3, "
                 "$4, $5::jsonb) ON CONFLICT DO NOTHING RETURNING step",
                 p.trial_id, p.kind, p.step, p.run_id, p.metrics_json)
               .empty()) {
        inserted[{p.trial_id, p.kind}].push_back({p.step, &p.metrics_json});
      }
    }
  } else {
    pqxx::stream_to stream(tx, "metrics", kMetricColumns);
    for (const auto& p : points) {
      stream << std::make_tuple(p.trial_id, p.kind, p.step, p.run_id, p.metrics_json);
      inserted[{p.trial_id, p.kind}].push_back({p.step, &p.metrics_json});
    }
    stream.complete();
  }
  for (const auto& [trial_kind, folded] : inserted) {
    FoldMetrics(tx, trial_kind.first, trial_kind.second, folded);
  }
}

// The part of `lines` from `begin` that shares the first line's task, agent and allocation, up to
// kMaxChunkLines lines: [begin, end).
size_t ChunkEnd(const std::vector<LogLine>& lines, size_t begin) {
  const LogLine& first = lines[begin];
  size_t end = begin + 1;
  while (end < lines.size() && end - begin < kMaxChunkLines &&
         lines[end].task_id == first.task_id && lines[end].agent_id == first.agent_id &&
         lines[end].allocation_id == first.allocation_id) {
    ++end;
  }
  return end;
}

// Per stream (0 stdout, 1 stderr), the offset ranges stored chunks of `first`'s source cover
// that overlap [low, high] of the lines given.
using Covered = std::array<std::vector<std::pair<int64_t, int64_t>>, 2>;

Covered StoredRanges(pqxx::work& tx, const LogLine& first, const OffsetRange ranges[2]) {
  Covered covered;
  if (!first.allocation_id || (ranges[0].empty() && ranges[1].empty())) return covered;
  // One writer at a time per source, so that two cannot both find a range free.
  tx.exec_params("SELECT pg_advisory_xact_lock(hashtext($1))",
                 *first.allocation_id + "/" + first.agent_id);
  for (const auto& row : tx.exec_params(
           "SELECT stdout_first, stdout_last, stderr_first, stderr_last FROM task_log_chunks"
           " WHERE allocation_id = $1 AND agent_id = $2 AND ((stdout_last >= $3 AND"
           " stdout_first <= $4) OR (stderr_last >= $5 AND stderr_first <= $6))",
           *first.allocation_id, first.agent_id, ranges[0].low, ranges[0].high, ranges[1].low,
           ranges[1].high)) {
    for (int stream = 0; stream < 2; ++stream) {
      if (!row[2 * stream].is_null()) {
        covered[stream].emplace_back(row[2 * stream].as<int64_t>(),
                                     row[2 * stream + 1].as<int64_t>());
      }
    }
  }
  return covered;
}

int StreamOf(const LogLine& line) { return line.stdtype == "stderr" ? 1 : 0; }

// Writes lines [begin, end) (one source) as a chunk, leaving out lines a stored chunk covers.
void WriteChunk(pqxx::work& tx, const std::vector<LogLine>& lines, size_t begin, size_t end) {
  OffsetRange ranges[2];
  for (size_t i = begin; i < end; ++i) {
    if (lines[i].source_offset) ranges[StreamOf(lines[i])].Add(*lines[i].source_offset);
  }
  const Covered covered = StoredRanges(tx, lines[begin], ranges);
  std::vector<LogLine> fresh;
  fresh.reserve(end - begin);
  for (size_t i = begin; i < end; ++i) {
    const LogLine& line = lines[i];
    const bool stored =
        line.source_offset && std::any_of(covered[StreamOf(line)].begin(),
                                          covered[StreamOf(line)].end(), [&](const auto& r) {
                                            return *line.source_offset >= r.first &&
                                                   *line.source_offset <= r.second;
                                          });
    if (!stored) fresh.push_back(line);
  }
  if (fresh.empty()) return;
  OffsetRange kept[2];
  int64_t first_ns = fresh.front().timestamp_ns, last_ns = first_ns;
  for (const LogLine& line : fresh) {
    if (line.source_offset) kept[StreamOf(line)].Add(*line.source_offset);
    first_ns = std::min(first_ns, line.timestamp_ns);
    last_ns = std::max(last_ns, line.timestamp_ns);
  }
  const LogLine& source = fresh.front();
  tx.exec_params(
      "INSERT INTO task_log_chunks (task_id, agent_id, allocation_id, first_ts, last_ts,"
      " line_count, stdout_first, stdout_last, stderr_first, stderr_last, codec, data)"
      " VALUES ($1, $2, $3, det_ts($4), det_ts($5), $6, $7, $8, $9, $10, $11, $12)",
      source.task_id, source.agent_id, source.allocation_id, first_ns, last_ns,
      static_cast<int64_t>(fresh.size()), kept[0].Low(), kept[0].High(), kept[1].Low(),
      kept[1].High(), static_cast<int>(ChunkCodec::kDeflate), Bytes(EncodeLogChunk(fresh)));
}

void WriteLogRows(pqxx::work& tx, const void* rows, IngestWriter::Mode) {
  const auto& lines = *static_cast<const std::vector<LogLine>*>(rows);
  for (size_t begin = 0; begin < lines.size();) {
    const size_t end = ChunkEnd(lines, begin);
    WriteChunk(tx, lines, begin, end);
    begin = end;
  }
}

}  // namespace
}  // namespace det::storage
