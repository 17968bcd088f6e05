#include "storage/ingest_writer.h"

#include <spdlog/spdlog.h>

#include <ctime>
#include <thread>
#include <tuple>

#include "storage/database.h"

namespace det::storage {
namespace {

const std::vector<std::string> kMetricColumns = {"trial_id", "kind", "step", "run_id", "metrics"};
const std::vector<std::string> kLogColumns = {"task_id",       "agent_id",     "timestamp",
                                              "level",         "stdtype",      "log",
                                              "allocation_id", "source_offset"};

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
  return WriteBatch("metrics/" + batch_id, &points, &WriteMetricRows);
}

Status IngestWriter::WriteLogs(const std::string& batch_id, const std::vector<LogLine>& lines) {
  return WriteBatch("logs/" + batch_id, &lines, &WriteLogRows);
}

Status IngestWriter::WriteBatch(const std::string& batch_id, const void* rows, Rows write) {
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
      auto claimed = tx.exec_params(
          "INSERT INTO ingest_batches (batch_id) VALUES ($1) ON CONFLICT DO NOTHING", batch_id);
      if (claimed.affected_rows() == 1) write(tx, rows, mode);  // else: committed before
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
  if (mode == IngestWriter::Mode::kRowByRow) {
    for (const auto& p : points) {
      tx.exec_params(
          "INSERT INTO metrics (trial_id, kind, step, run_id, metrics) VALUES ($1, $2, $3, $4, "
          "$5::jsonb) ON CONFLICT DO NOTHING",
          p.trial_id, p.kind, p.step, p.run_id, p.metrics_json);
    }
    return;
  }
  pqxx::stream_to stream(tx, "metrics", kMetricColumns);
  for (const auto& p : points) {
    stream << std::make_tuple(p.trial_id, p.kind, p.step, p.run_id, p.metrics_json);
  }
  stream.complete();
}

void WriteLogRows(pqxx::work& tx, const void* rows, IngestWriter::Mode mode) {
  const auto& lines = *static_cast<const std::vector<LogLine>*>(rows);
  if (mode == IngestWriter::Mode::kRowByRow) {
    for (const auto& l : lines) {
      tx.exec_params(
          "INSERT INTO task_logs (task_id, agent_id, timestamp, level, stdtype, log,"
          " allocation_id, source_offset) VALUES ($1, $2, $3::timestamptz, $4, $5, $6, $7, $8)"
          " ON CONFLICT DO NOTHING",
          l.task_id, l.agent_id, TimestampText(l.timestamp_ns), l.level, l.stdtype, l.log,
          l.allocation_id, l.source_offset);
    }
    return;
  }
  pqxx::stream_to stream(tx, "task_logs", kLogColumns);
  for (const auto& l : lines) {
    stream << std::make_tuple(l.task_id, l.agent_id, TimestampText(l.timestamp_ns), l.level,
                              l.stdtype, l.log, l.allocation_id, l.source_offset);
  }
  stream.complete();
}

}  // namespace
}  // namespace det::storage
