// Log volume: a workload that prints N short lines ("1".."N", as `seq`) through one det-agent
// into a real det-master and its private PostgreSQL. Figures, each beside its baseline or goal:
//
//   stored lines/s   submission to the task's end recorded with every line stored, beside `seq`
//                    writing the same lines to a file on this machine (the raw write)
//   peak RSS         VmHWM of det-agent and det-master (goal < 150 MiB each)
//   bytes per line   PostgreSQL's task_log_chunks and ingest_batches (tables, indexes, TOAST)
//                    and the WAL written, per line (goal <= 100 bytes)
//   read-back        every line read through the gateway in pages of 10,000 (task.logs), as
//                    det task logs reads them: stored chunks, decoded by the reader (goal >= 1M
//                    lines/s); beside the same pages sent as lines (the master decodes), and the
//                    master's read straight from PostgreSQL; each line checked in order
//
// Then metrics at volume: one trial's curve of 1M points (5% of the lines in short mode; 10
// values each) stored through the ingest writer in batches of 10,000 (points/s, PostgreSQL bytes
// per point with the rollups), and read through the gateway (trial.metrics) as the WebUI reads a
// chart: the whole curve downsampled to 2,000 values per metric, beside a page of the first
// 2,000 points read as they are (the baseline: what any chart of 2,000 points costs); the whole
// curve read raw in pages of 10,000 (points/s); det-master's peak RSS after it all.
//
//   log_volume_bench           20,000,000 lines
//   log_volume_bench --short   200,000 lines (CI)
//   log_volume_bench --lines N                (N / 20 metric points, at least 10,000)
//   log_volume_bench --lines N --points M
//
// Exit status 1 only on a functional failure (a line missing, repeated or out of order; the task
// failing; a wait over its limit).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <pqxx/pqxx>
#include <string>

#include "bench/bench_cluster.h"
#include "bus/catalog/experiments.h"
#include "bus/catalog/tasks.h"
#include "storage/database.h"
#include "storage/experiments_repo.h"
#include "storage/ingest_writer.h"
#include "storage/log_chunk.h"
#include "storage/logs_repo.h"
#include "storage/metrics_repo.h"

namespace {

using det::bench::BenchCluster;
using SteadyClock = std::chrono::steady_clock;

double Seconds(SteadyClock::time_point since) {
  return std::chrono::duration<double>(SteadyClock::now() - since).count();
}

// The peak resident memory of a live process (VmHWM), in MiB.
double PeakRssMib(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmHWM:", 0) == 0) return std::atof(line.c_str() + 6) / 1024;
  }
  return -1;
}

// `seq 1 n > file` on this machine: lines per second.
double RawWrite(int64_t n, const det::bench::fs::path& file) {
  const auto start = SteadyClock::now();
  const pid_t pid = det::bench::Spawn({"seq", "1", std::to_string(n)}, file);
  waitpid(pid, nullptr, 0);
  return n / Seconds(start);
}

int64_t Scalar(const det::storage::DbConfig& db, const std::string& sql) {
  auto connection = det::storage::Connect(db);
  if (!connection.ok()) return -1;
  pqxx::nontransaction tx(**connection);
  return tx.exec1(sql)[0].as<int64_t>();
}

int64_t StoredBytes(const det::storage::DbConfig& db) {
  return Scalar(db,
                "SELECT pg_total_relation_size('task_log_chunks') +"
                " pg_total_relation_size('ingest_batches')");
}

int64_t WalBytes(const det::storage::DbConfig& db) {
  return Scalar(db, "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint");
}

// Waits until the task ended with every line stored; false after `limit`.
bool WaitStored(det::bus::RpcClient& client, const std::string& token, const std::string& task,
                std::chrono::seconds limit) {
  const auto deadline = SteadyClock::now() + limit;
  while (SteadyClock::now() < deadline) {
    auto reply = client.Call<det::bus::TaskLogsRequest, det::bus::TaskLogsReply>(
        {task, std::numeric_limits<int64_t>::max(), 1}, token);
    if (reply.ok() && reply->task_ended) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

// Reads every line in pages; lines/s, or -1 when a line is missing or out of place.
// The lines of one page: sent as lines, or as stored chunks decoded here (as det reads them).
bool PageLines(const det::bus::TaskLogsReply& page, int64_t after,
               std::vector<std::pair<int64_t, std::string>>& lines) {
  lines.clear();
  for (const auto& line : page.lines) lines.emplace_back(line.id, line.text);
  for (const auto& chunk : page.chunks) {
    auto decoded = det::storage::DecodeLogChunk(static_cast<det::storage::ChunkCodec>(chunk.codec),
                                                chunk.data);
    if (!decoded.ok()) {
      std::fprintf(stderr, "chunk %lld: %s\n", static_cast<long long>(chunk.id),
                   decoded.status().message().c_str());
      return false;
    }
    for (size_t i = 0; i < decoded->size(); ++i) {
      const int64_t id = det::storage::LogLineId(chunk.id, i);
      if (id > after) lines.emplace_back(id, std::move((*decoded)[i].log));
    }
  }
  return true;
}

// Reads every line through the gateway in pages of 10,000 (`chunks`: as stored chunks, decoded
// here), checking each: lines/s, or -1.
double ReadBack(det::bus::RpcClient& client, const std::string& token, const std::string& task,
                int64_t n, bool chunks) {
  const auto start = SteadyClock::now();
  int64_t after = 0, seen = 0;
  std::vector<std::pair<int64_t, std::string>> lines;
  while (true) {
    det::bus::TaskLogsRequest request{task, after, 10000};
    request.chunks = chunks;
    auto page = client.Call<det::bus::TaskLogsRequest, det::bus::TaskLogsReply>(request, token);
    if (!page.ok()) {
      std::fprintf(stderr, "read: %s\n", page.status().message().c_str());
      return -1;
    }
    if (!PageLines(*page, after, lines)) return -1;
    if (page->lines.empty() && page->chunks.empty()) break;
    for (const auto& [id, text] : lines) {
      if (text != std::to_string(++seen)) {
        std::fprintf(stderr, "line %lld reads \"%s\"\n", static_cast<long long>(seen),
                     text.c_str());
        return -1;
      }
      after = id;
    }
    if (!page->chunks.empty()) {
      const auto& last = page->chunks.back();
      after = std::max(after, det::storage::LogLineId(last.id, last.line_count) - 1);
    }
  }
  if (seen != n) {
    std::fprintf(stderr, "read %lld lines of %lld\n", static_cast<long long>(seen),
                 static_cast<long long>(n));
    return -1;
  }
  return n / Seconds(start);
}

// Reads every line straight from PostgreSQL with the master's read (no gateway): lines/s.
double StorageRead(const det::storage::DbConfig& db, const std::string& task, int64_t n) {
  auto connection = det::storage::Connect(db);
  if (!connection.ok()) return -1;
  const auto start = SteadyClock::now();
  int64_t after = 0, seen = 0;
  while (true) {
    pqxx::work tx(**connection);
    auto page = det::storage::ReadTaskLogs(tx, task, {after}, 10000);
    if (!page.ok() || page->empty()) break;
    seen += static_cast<int64_t>(page->size());
    after = page->back().id;
  }
  return seen == n ? n / Seconds(start) : -1;
}

// A trial of its own experiment, for the metric figures.
int64_t CreateBenchTrial(const det::storage::DbConfig& db) {
  det::storage::Database database(db, 1);
  int64_t trial = -1;
  const det::Status created = database.Run([&](pqxx::work& tx) -> det::Status {
    const int64_t experiment =
        det::storage::CreateExperiment(tx, {"metric-volume", "name: metric-volume\n", "ACTIVE"});
    trial = det::storage::CreateTrial(tx, experiment, "r1", "{}", "ACTIVE");
    return det::Status::Ok();
  });
  return created.ok() ? trial : -1;
}

// Stores steps 0..n-1 of a wavy 10-value curve; points/s, or -1.
double StoreCurve(const det::storage::DbConfig& db, int64_t trial, int64_t n) {
  det::storage::IngestWriter writer(db);
  const auto start = SteadyClock::now();
  for (int64_t first = 0; first < n; first += 10000) {
    std::vector<det::storage::MetricPoint> batch;
    for (int64_t step = first; step < std::min(n, first + 10000); ++step) {
      std::string values = "{";
      for (int i = 0; i < 10; ++i) {
        char value[64];
        std::snprintf(value, sizeof value, "%s\"metric_%d\": %.6f", i ? ", " : "", i,
                      std::sin(static_cast<double>(step) / (1000.0 * (i + 1))));
        values += value;
      }
      batch.push_back({trial, "training", step, 0, values + "}"});
    }
    if (!writer.WriteMetrics("curve-" + std::to_string(first), batch).ok()) return -1;
  }
  return n / Seconds(start);
}

// Mean milliseconds of `rounds` trial.metrics calls; -1 on an error.
double MetricReadMs(det::bus::RpcClient& client, const std::string& token,
                    const det::bus::TrialMetricsRequest& request, int rounds, size_t* points) {
  const auto start = SteadyClock::now();
  for (int i = 0; i < rounds; ++i) {
    auto reply =
        client.Call<det::bus::TrialMetricsRequest, det::bus::TrialMetricsReply>(request, token);
    if (!reply.ok()) {
      std::fprintf(stderr, "trial.metrics: %s\n", reply.status().message().c_str());
      return -1;
    }
    *points = reply->metrics.size();
  }
  return Seconds(start) * 1000 / rounds;
}

// Every point in pages of 10,000, in points/s; -1 when one is missing.
double MetricFullRead(det::bus::RpcClient& client, const std::string& token, int64_t trial,
                      int64_t n) {
  const auto start = SteadyClock::now();
  det::bus::TrialMetricsRequest request{trial, "training", -1, 10000};
  int64_t seen = 0;
  while (true) {
    auto page =
        client.Call<det::bus::TrialMetricsRequest, det::bus::TrialMetricsReply>(request, token);
    if (!page.ok() || page->metrics.empty()) break;
    for (const auto& point : page->metrics) {
      if (point.step != seen++) return -1;
    }
    request.after_step = page->metrics.back().step;
  }
  return seen == n ? n / Seconds(start) : -1;
}

int RunMetrics(BenchCluster& cluster, det::bus::RpcClient& client, const std::string& token,
               int64_t n) {
  const int64_t trial = CreateBenchTrial(cluster.db());
  const int64_t bytes_before = Scalar(cluster.db(),
                                      "SELECT pg_total_relation_size('metrics') +"
                                      " pg_total_relation_size('metric_rollups')");
  const double stored = trial < 0 ? -1 : StoreCurve(cluster.db(), trial, n);
  if (stored < 0) {
    std::fprintf(stderr, "storing the metric curve failed\n");
    return 1;
  }
  const double per_point = double(Scalar(cluster.db(),
                                         "SELECT pg_total_relation_size('metrics') +"
                                         " pg_total_relation_size('metric_rollups')") -
                                  bytes_before) /
                           n;
  size_t downsampled_points = 0, page_points = 0;
  det::bus::TrialMetricsRequest curve{trial, "training", -1, 1000, 2000};
  det::bus::TrialMetricsRequest page{trial, "training", -1, 2000};
  const double curve_ms = MetricReadMs(client, token, curve, 5, &downsampled_points);
  const double page_ms = MetricReadMs(client, token, page, 5, &page_points);
  const double full = MetricFullRead(client, token, trial, n);
  if (curve_ms < 0 || page_ms < 0 || full < 0) {
    std::fprintf(stderr, "reading the metric curve failed\n");
    return 1;
  }
  const double master_mib = PeakRssMib(cluster.master_pid());
  std::printf("metric volume: one trial, %lld points of 10 values\n", static_cast<long long>(n));
  std::printf("  stored                 %12.0f points/s (ingest writer, batches of 10,000)\n",
              stored);
  std::printf("  PostgreSQL per point   %12.1f bytes     (metrics and their rollups)\n", per_point);
  std::printf(
      "  chart read             %12.1f ms        %zu points (downsampled to 2,000 per "
      "metric); a raw page of %zu points: %.1f ms\n",
      curve_ms, downsampled_points, page_points, page_ms);
  std::printf("  full read-back         %12.0f points/s (pages of 10,000)\n", full);
  std::printf("  peak RSS det-master    %12.1f MiB       goal < 150: %s\n", master_mib,
              master_mib < 150 ? "met" : "MISSED");
  return 0;
}

int Run(int64_t n, int64_t points, const std::string& build) {
  BenchCluster cluster(build);
  if (det::Status started = cluster.StartMaster(); !started.ok()) {
    std::fprintf(stderr, "%s\n", started.ToString().c_str());
    return 1;
  }
  const pid_t agent = cluster.StartAgent("flood", 1);
  zmq::context_t context;
  det::bus::RpcClient client(context, cluster.endpoint("gateway"), {},
                             {.timeout = std::chrono::seconds(60)});
  const std::string& token = cluster.admin_token();
  if (cluster.WaitForAgents(client, token, 1, std::chrono::seconds(10)) != 1) return 1;
  const double raw = RawWrite(n, cluster.dir() / "raw.txt");

  const int64_t bytes_before = StoredBytes(cluster.db()), wal_before = WalBytes(cluster.db());
  const auto start = SteadyClock::now();
  auto submitted = client.Call<det::bus::CommandRunRequest, det::bus::CommandRunReply>(
      {{"seq 1 " + std::to_string(n)}, 1, "", {}}, token);
  if (!submitted.ok()) {
    std::fprintf(stderr, "submit: %s\n", submitted.status().message().c_str());
    return 1;
  }
  if (!WaitStored(client, token, submitted->task_id, std::chrono::seconds(3600))) {
    std::fprintf(stderr, "the task's lines were not all stored within an hour\n");
    return 1;
  }
  const double stored = n / Seconds(start);
  const double per_line = double(StoredBytes(cluster.db()) - bytes_before) / n;
  const double wal_per_line = double(WalBytes(cluster.db()) - wal_before) / n;
  const double read = ReadBack(client, token, submitted->task_id, n, /*chunks=*/true);
  const double read_lines = ReadBack(client, token, submitted->task_id, n, /*chunks=*/false);
  if (read < 0 || read_lines < 0) return 1;
  const double storage_read = StorageRead(cluster.db(), submitted->task_id, n);
  const double agent_mib = PeakRssMib(agent), master_mib = PeakRssMib(cluster.master_pid());

  auto goal = [](bool met) { return met ? "met" : "MISSED"; };
  std::printf("log volume: %lld lines (\"1\"..\"%lld\") through one agent\n",
              static_cast<long long>(n), static_cast<long long>(n));
  std::printf("  stored                 %12.0f lines/s   raw write to a file %12.0f lines/s\n",
              stored, raw);
  std::printf("  peak RSS det-agent     %12.1f MiB       goal < 150: %s\n", agent_mib,
              goal(agent_mib < 150));
  std::printf("  peak RSS det-master    %12.1f MiB       goal < 150: %s\n", master_mib,
              goal(master_mib < 150));
  std::printf("  PostgreSQL per line    %12.1f bytes     goal <= 100: %s (WAL %.1f bytes/line)\n",
              per_line, goal(per_line <= 100), wal_per_line);
  std::printf("  read-back              %12.0f lines/s   goal >= 1,000,000: %s\n", read,
              goal(read >= 1e6));
  std::printf(
      "    the same sent as lines (the master decodes; REST's path) %.0f lines/s; from "
      "PostgreSQL with decoding alone (no gateway) %.0f lines/s\n",
      read_lines, storage_read);
  return RunMetrics(cluster, client, token, points);
}

}  // namespace

int main(int argc, char** argv) {
  const bool short_mode = argc > 1 && std::strcmp(argv[1], "--short") == 0;
  int64_t lines = short_mode ? 200'000 : 20'000'000;
  if (argc > 2 && std::strcmp(argv[1], "--lines") == 0) lines = std::atoll(argv[2]);
  int64_t points = std::max<int64_t>(lines / 20, 10000);
  if (argc > 4 && std::strcmp(argv[3], "--points") == 0) points = std::atoll(argv[4]);
  return Run(lines, points, det::bench::BuildDir(argv[0]));
}
