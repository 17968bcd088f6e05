// Storage ingestion benchmark: rows/s through storage::IngestWriter against raw COPY (libpq's
// PQputCopyData with the same rows pre-formatted) into the same table, in the same run, on a
// private PostgreSQL this program starts and removes. Figures are printed, never asserted.
//
//   storage_bench            1,000,000 metric rows (trial, step, 10 named values) and as many log
//                            lines, in batches of 10,000
//   storage_bench --short    20,000 of each (CI)
// Each figure is the best of two rounds run in alternating order.
#include <libpq-fe.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "bus/rpc_client.h"
#include "storage/database.h"
#include "storage/ingest_writer.h"
#include "storage/local_postgres.h"
#include "storage/migrations.h"

namespace {

using Clock = std::chrono::steady_clock;
using det::storage::DbConfig;

constexpr int kBatch = 10000;

std::string MetricsJson(int64_t step) {
  std::string json = "{";
  for (int i = 0; i < 10; ++i) {
    char value[64];
    std::snprintf(value, sizeof value, "%s\"metric_%d\": %.6f", i ? ", " : "", i,
                  1.0 / static_cast<double>(step + i + 1));
    json += value;
  }
  return json + "}";
}

std::vector<det::storage::MetricPoint> MetricRows(int64_t trial, int n) {
  std::vector<det::storage::MetricPoint> rows;
  rows.reserve(n);
  for (int i = 0; i < n; ++i) rows.push_back({trial, "training", i, 0, MetricsJson(i)});
  return rows;
}

std::vector<det::storage::LogLine> LogRows(const std::string& task, int n) {
  std::vector<det::storage::LogLine> rows;
  rows.reserve(n);
  for (int i = 0; i < n; ++i) {
    rows.push_back({task, "agent-1", 1767225600000000000 + int64_t{i} * 1000, "INFO", "stdout",
                    "step " + std::to_string(i) + ": loss 0.123456 accuracy 0.987654 lr 0.001"});
  }
  return rows;
}

// COPY text format of the same rows (values here need no escaping).
std::string MetricText(const det::storage::MetricPoint& p) {
  return std::to_string(p.trial_id) + "\t" + p.kind + "\t" + std::to_string(p.step) + "\t" +
         std::to_string(p.run_id) + "\t" + p.metrics_json + "\n";
}
std::string LogText(const det::storage::LogLine& l) {
  return l.task_id + "\t" + l.agent_id + "\t" + det::storage::TimestampText(l.timestamp_ns) + "\t" +
         l.level + "\t" + l.stdtype + "\t" + l.log + "\n";
}

// Raw baseline: one COPY per batch, one transaction per batch (as the writer commits per batch).
template <class Row>
double RawCopy(PGconn* conn, const std::string& copy_sql, const std::vector<Row>& rows,
               std::string (*text)(const Row&)) {
  std::vector<std::string> lines;
  lines.reserve(rows.size());
  for (const auto& r : rows) lines.push_back(text(r));  // formatting is not timed
  const auto start = Clock::now();
  for (size_t first = 0; first < lines.size(); first += kBatch) {
    PQclear(PQexec(conn, "BEGIN"));
    PGresult* res = PQexec(conn, copy_sql.c_str());
    if (PQresultStatus(res) != PGRES_COPY_IN) {
      std::fprintf(stderr, "COPY failed: %s\n", PQerrorMessage(conn));
      std::exit(1);
    }
    PQclear(res);
    for (size_t i = first; i < std::min(lines.size(), first + kBatch); ++i) {
      PQputCopyData(conn, lines[i].data(), static_cast<int>(lines[i].size()));
    }
    PQputCopyEnd(conn, nullptr);
    res = PQgetResult(conn);
    if (PQresultStatus(res) != PGRES_COMMAND_OK) {
      std::fprintf(stderr, "COPY failed: %s\n", PQerrorMessage(conn));
      std::exit(1);
    }
    PQclear(res);
    PQclear(PQexec(conn, "COMMIT"));
  }
  return static_cast<double>(rows.size()) /
         std::chrono::duration<double>(Clock::now() - start).count();
}

template <class Row, class Write>
double ThroughWriter(const std::vector<Row>& rows, Write write) {
  const auto start = Clock::now();
  for (size_t first = 0, b = 0; first < rows.size(); first += kBatch, ++b) {
    std::vector<Row> batch(rows.begin() + first,
                           rows.begin() + std::min(rows.size(), first + kBatch));
    det::Status s = write("bench-" + std::to_string(b), batch);
    if (!s.ok()) {
      std::fprintf(stderr, "writer failed: %s\n", s.ToString().c_str());
      std::exit(1);
    }
  }
  return static_cast<double>(rows.size()) /
         std::chrono::duration<double>(Clock::now() - start).count();
}

void Truncate(PGconn* conn) {
  PQclear(PQexec(
      conn, "TRUNCATE metrics, metric_rollups, task_log_chunks, bench_log_rows, ingest_batches"));
  PQclear(PQexec(conn, "CHECKPOINT"));
}

}  // namespace

int main(int argc, char** argv) {
  const bool short_mode = argc > 1 && std::string(argv[1]) == "--short";
  const int rows = short_mode ? 20000 : 1000000;
  const auto dir =
      std::filesystem::temp_directory_path() / ("det-bench-pg-" + det::bus::RandomId());
  int rc = 0;
  {
    auto pg = det::storage::LocalPostgres::Start({dir.string()});
    if (!pg.ok()) {
      std::fprintf(stderr, "%s\n", pg.status().ToString().c_str());
      return 1;
    }
    const DbConfig db = (*pg)->db();
    auto connection = det::storage::Connect(db);
    if (!connection.ok() || !det::storage::Migrate(**connection).ok()) return 1;
    PGconn* raw = PQconnectdb(db.ConnectionString().c_str());
    // The baseline for log lines: a raw COPY into a plain table of one row per line.
    PQclear(PQexec(raw,
                   "CREATE TABLE bench_log_rows (id bigserial PRIMARY KEY, task_id text NOT NULL,"
                   " agent_id text NOT NULL, timestamp timestamptz NOT NULL, level text NOT NULL,"
                   " stdtype text NOT NULL, log text NOT NULL)"));
    det::storage::IngestWriter writer(db);

    auto metrics = MetricRows(1, rows);
    auto logs = LogRows("task-1", rows);
    std::printf("storage_bench (%s): %d rows each, batches of %d, local PostgreSQL on loopback\n\n",
                short_mode ? "short" : "full", rows, kBatch);
    std::printf("%-22s %14s %14s %7s  %s\n", "rows", "writer (b)", "raw COPY (a)", "b/a", "goal");
    // Two rounds, order alternating (raw first, then writer first), best of each: the first
    // writes into a fresh table pay for WAL segments and table growth.
    double metric_raw = 0, metric_writer = 0, log_raw = 0, log_writer = 0;
    for (int round = 0; round < 2; ++round) {
      auto raw_metrics = [&] {
        Truncate(raw);
        metric_raw = std::max(
            metric_raw, RawCopy<det::storage::MetricPoint>(
                            raw, "COPY metrics (trial_id, kind, step, run_id, metrics) FROM STDIN",
                            metrics, &MetricText));
      };
      auto writer_metrics = [&] {
        Truncate(raw);
        metric_writer = std::max(metric_writer,
                                 ThroughWriter(metrics, [&](const std::string& id, const auto& b) {
                                   return writer.WriteMetrics(id, b);
                                 }));
      };
      auto raw_logs = [&] {
        Truncate(raw);
        log_raw = std::max(
            log_raw, RawCopy<det::storage::LogLine>(raw,
                                                    "COPY bench_log_rows (task_id, agent_id, "
                                                    "timestamp, level, stdtype, log) FROM STDIN",
                                                    logs, &LogText));
      };
      auto writer_logs = [&] {
        Truncate(raw);
        log_writer =
            std::max(log_writer, ThroughWriter(logs, [&](const std::string& id, const auto& b) {
                       return writer.WriteLogs(id, b);
                     }));
      };
      if (round == 0) {
        raw_metrics();
        writer_metrics();
        raw_logs();
        writer_logs();
      } else {
        writer_metrics();
        raw_metrics();
        writer_logs();
        raw_logs();
      }
    }
    auto line = [](const char* what, double b, double a) {
      std::printf("%-22s %12.0f/s %12.0f/s %7.2f  b/a >= 0.7: %s\n", what, b, a, b / a,
                  b / a >= 0.7 ? "met" : "MISSED");
    };
    line("metric rows (10 vals)", metric_writer, metric_raw);
    line("log lines", log_writer, log_raw);
    PQfinish(raw);
  }
  std::filesystem::remove_all(dir);
  return rc;
}
