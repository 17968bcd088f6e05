#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "storage/db_config.h"
#include "storage/log_line.h"

namespace det::storage {

// One metrics report: `metrics_json` is a JSON object of named values.
struct MetricPoint {
  int64_t trial_id = 0;
  std::string kind;  // "training" | "validation"
  int64_t step = 0;
  int32_t run_id = 0;
  std::string metrics_json;
  int64_t reported_ns = 0;  // when it was stored (Unix nanoseconds; set by reads only)
};

// Writes metrics and task logs in batches with COPY.
//
// Contract: Write*() returns OK only after the batch is committed, and a batch lands exactly once
// however often it is retried. Each batch carries an id that is committed in the same transaction
// as its rows (table ingest_batches, ids scoped per kind: a metrics and a logs batch may share an
// id); a retry whose id is already there is acknowledged without writing. When the connection
// breaks (server restart) or the commit outcome is unknown, the writer reconnects and retries the
// whole batch, up to `attempts` times with a growing pause. A metrics batch that repeats points
// already stored (same trial, kind, step), or a logs batch that repeats lines already stored (same
// allocation, stdtype, source offset), is written row by row keeping the stored rows.
//
// Threading: one thread at a time per writer; use one writer per thread for concurrent writes.
class IngestWriter {
 public:
  explicit IngestWriter(DbConfig config, int attempts = 30);

  Status WriteMetrics(const std::string& batch_id, const std::vector<MetricPoint>& points);
  Status WriteLogs(const std::string& batch_id, const std::vector<LogLine>& lines);
  // Several log batches in one transaction (one commit), each still landing exactly once.
  struct LogBatch {
    std::string batch_id;
    const std::vector<LogLine>* lines;
  };
  Status WriteLogBatches(const std::vector<LogBatch>& batches);

  int reconnects() const { return reconnects_; }

  // How a batch's rows go in: COPY, or (after a conflict) one INSERT ... ON CONFLICT per row.
  enum class Mode { kCopy, kRowByRow };

 private:
  using Rows = void (*)(pqxx::work&, const void* rows, Mode mode);
  // Batches (id, rows) written by `write` in one transaction, each skipped if its id is there.
  Status WriteBatch(const std::vector<std::pair<std::string, const void*>>& batches, Rows write);

  DbConfig config_;
  int attempts_;
  int reconnects_ = 0;
  std::unique_ptr<pqxx::connection> connection_;
};

// `text` with every byte sequence that is not valid UTF-8, and every NUL, replaced by U+FFFD:
// PostgreSQL refuses both in text columns, and one bad byte must not cost a batch.
std::string ValidUtf8(std::string_view text);

// "2026-11-21 21:13:14.123456+00", PostgreSQL's timestamptz text form, from Unix nanoseconds.
std::string TimestampText(int64_t unix_ns);

}  // namespace det::storage
