// Log volume: a workload that prints N short lines ("1".."N", as `seq`) through one det-agent
// into a real det-master and its private PostgreSQL. Figures, each beside its baseline or goal:
//
//   stored lines/s   submission to the task's end recorded with every line stored, beside `seq`
//                    writing the same lines to a file on this machine (the raw write)
//   peak RSS         VmHWM of det-agent and det-master (goal < 150 MiB each)
//   bytes per line   PostgreSQL's task_log_chunks and ingest_batches (tables, indexes, TOAST)
//                    and the WAL written, per line (goal <= 100 bytes)
//   read-back        every line read through the gateway in pages of 10,000 (task.logs), as
//                    det task logs reads them (goal >= 1M lines/s); each line checked in order
//
//   log_volume_bench           20,000,000 lines
//   log_volume_bench --short   200,000 lines (CI)
//   log_volume_bench --lines N
//
// Exit status 1 only on a functional failure (a line missing, repeated or out of order; the task
// failing; a wait over its limit).
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <pqxx/pqxx>
#include <string>

#include "bench/bench_cluster.h"
#include "bus/catalog/tasks.h"
#include "storage/database.h"
#include "storage/telemetry_repo.h"

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
double ReadBack(det::bus::RpcClient& client, const std::string& token, const std::string& task,
                int64_t n) {
  const auto start = SteadyClock::now();
  int64_t after = 0, seen = 0;
  while (true) {
    auto page = client.Call<det::bus::TaskLogsRequest, det::bus::TaskLogsReply>(
        {task, after, 10000}, token);
    if (!page.ok()) {
      std::fprintf(stderr, "read: %s\n", page.status().message().c_str());
      return -1;
    }
    if (page->lines.empty()) break;
    for (const auto& line : page->lines) {
      if (line.text != std::to_string(++seen)) {
        std::fprintf(stderr, "line %lld reads \"%s\"\n", static_cast<long long>(seen),
                     line.text.c_str());
        return -1;
      }
    }
    after = page->lines.back().id;
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

int Run(int64_t n, const std::string& build) {
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
  const double read = ReadBack(client, token, submitted->task_id, n);
  if (read < 0) return 1;
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
  std::printf("    of which PostgreSQL and decoding alone (no gateway) %.0f lines/s\n",
              storage_read);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const bool short_mode = argc > 1 && std::strcmp(argv[1], "--short") == 0;
  int64_t lines = short_mode ? 200'000 : 20'000'000;
  if (argc > 2 && std::strcmp(argv[1], "--lines") == 0) lines = std::atoll(argv[2]);
  return Run(lines, det::bench::BuildDir(argv[0]));
}
