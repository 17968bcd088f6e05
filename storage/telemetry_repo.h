#pragma once

// Reads of what IngestWriter writes: a trial's metrics and a task's log lines, in pages; and the
// Core API's single metric reports.
//
// Functions take the caller's transaction (Database::Run). Times are Unix nanoseconds.

#include <cstdint>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "storage/ingest_writer.h"

namespace det::storage {

// Points of one kind ("training" | "validation") with step > after_step, by step, at most `limit`.
std::vector<MetricPoint> ReadMetrics(pqxx::work& tx, int64_t trial_id, const std::string& kind,
                                     int64_t after_step, int limit);

// Stores one point; false when (trial, kind, step) was already stored (a report sent again).
bool RecordMetric(pqxx::work& tx, const MetricPoint& point);

struct StoredLogLine {
  int64_t id = 0;  // increases in the order lines were stored: the next page's cursor
  LogLine line;
};

// Lines with id > after_id, oldest first, at most `limit`.
std::vector<StoredLogLine> ReadTaskLogs(pqxx::work& tx, const std::string& task_id,
                                        int64_t after_id, int limit);

}  // namespace det::storage
