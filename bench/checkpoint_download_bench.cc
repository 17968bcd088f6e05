// Checkpoint download through the master (Determined's MASTER mode: GET /checkpoints/{uuid}, a
// gzipped tar streamed as it is read, what the SDK's Checkpoint.download(mode=MASTER) and
// `det checkpoint download --mode master` fetch) next to DIRECT mode (the client reads the
// storage itself: for shared_fs, a copy of the folder), on the same bytes in the same run, with
// the master's resident memory sampled throughout.
//
//   checkpoint_download_bench [--short] [--mib N]
//
// A real det-master over a private PostgreSQL; the checkpoint is N MiB of random bytes (weights
// barely compress) in 4 files under a shared_fs host_path, recorded as a trial's COMPLETED
// checkpoint. MASTER: `curl -H 'Accept: application/gzip' | tar -xz`, as a client without access
// to the storage extracts it; DIRECT: `cp -r` of the folder. Both read what the first, untimed
// copy left in the page cache. Each extracted copy is compared with the original. Goal
// (issue 55): MASTER at least 0.8 of DIRECT's MB/s, the master's memory flat (< 50 MB over idle).

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <thread>

#include "bench/bench_cluster.h"
#include "bus/catalog/experiments.h"
#include "storage/database.h"
#include "storage/experiments_repo.h"

namespace {

namespace fs = std::filesystem;
using det::bench::BenchCluster;
using Clock = std::chrono::steady_clock;

constexpr int kFiles = 4;

// The master's resident memory (VmRSS) in MiB, or -1.
double ResidentMiB(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  }
  return -1;
}

// The highest resident memory seen while it runs (every 20 ms).
class PeakMemory {
 public:
  explicit PeakMemory(pid_t pid) : pid_(pid), thread_([this] { Sample(); }) {}
  ~PeakMemory() { Stop(); }
  double Stop() {
    running_ = false;
    if (thread_.joinable()) thread_.join();
    return peak_;
  }

 private:
  void Sample() {
    while (running_) {
      peak_ = std::max(peak_.load(), ResidentMiB(pid_));
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  pid_t pid_;
  std::atomic<bool> running_{true};
  std::atomic<double> peak_{0};
  std::thread thread_;
};

// N MiB of random bytes in kFiles files under `folder`; their names and sizes as the checkpoint's
// resources (JSON).
std::string WriteCheckpoint(const fs::path& folder, int64_t mib) {
  fs::create_directories(folder);
  std::mt19937_64 random(42);
  std::string resources = "{";
  const int64_t each = mib * (1 << 20) / kFiles;
  std::string block(1 << 20, '\0');
  for (int f = 0; f < kFiles; ++f) {
    const std::string name = "weights-" + std::to_string(f) + ".bin";
    std::ofstream out(folder / name, std::ios::binary);
    for (int64_t written = 0; written < each; written += static_cast<int64_t>(block.size())) {
      for (size_t i = 0; i < block.size(); i += 8) {
        const uint64_t word = random();
        std::memcpy(&block[i], &word, 8);
      }
      out.write(block.data(),
                static_cast<std::streamsize>(std::min<int64_t>(each - written, block.size())));
    }
    resources += std::string(f ? "," : "") + "\"" + name + "\":" + std::to_string(each);
  }
  return resources + "}";
}

// Runs `command` (sh -c); its seconds, or -1 when it failed.
double Timed(const std::string& command) {
  const auto start = Clock::now();
  if (std::system(command.c_str()) != 0) return -1;
  return std::chrono::duration<double>(Clock::now() - start).count();
}

bool SameFiles(const fs::path& a, const fs::path& b) {
  for (int f = 0; f < kFiles; ++f) {
    const std::string name = "weights-" + std::to_string(f) + ".bin";
    if (std::system(
            ("cmp -s '" + (a / name).string() + "' '" + (b / name).string() + "'").c_str()) != 0) {
      return false;
    }
  }
  return true;
}

// A paused single-trial experiment whose trial is given a COMPLETED checkpoint `uuid` (the rows
// a trial's report would write) stored under `host_path`.
bool RecordCheckpoint(BenchCluster& cluster, const fs::path& host_path, const std::string& uuid,
                      const std::string& resources) {
  zmq::context_t context;
  det::bus::RpcClient client(context, cluster.endpoint("gateway"), cluster.client_security(), {});
  det::bus::ExperimentCreateRequest create;
  create.config_yaml =
      "name: download-bench\nentrypoint: 'true'\n"
      "searcher: {name: single, metric: loss, max_length: {batches: 1}}\n"
      "checkpoint_storage: {type: shared_fs, host_path: " +
      host_path.string() + "}\n";
  const std::string& token = cluster.admin_token();
  auto created = client.Call<det::bus::ExperimentCreateRequest, det::bus::ExperimentCreateReply>(
      create, token);
  if (!created.ok()) {
    std::fprintf(stderr, "create: %s\n", created.status().ToString().c_str());
    return false;
  }
  (void)client.Call<det::bus::ExperimentActionRequest, det::bus::ExperimentActionReply>(
      {created->id, "pause"}, token);
  auto got = client.Call<det::bus::ExperimentGetRequest, det::bus::ExperimentGetReply>(
      {created->id}, token);
  if (!got.ok() || got->trials.empty()) {
    std::fprintf(stderr, "the experiment has no trial\n");
    return false;
  }
  det::storage::Database db(cluster.db(), 1);
  return db
      .Run([&](pqxx::work& tx) {
        return det::storage::SaveCheckpoint(tx,
                                            {uuid, got->trials[0].id, 1, "COMPLETED", resources});
      })
      .ok();
}

}  // namespace

int main(int argc, char** argv) {
  int64_t mib = 1024;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--short") mib = 32;
    if (arg == "--mib" && i + 1 < argc) mib = std::stoll(argv[++i]);
  }
  BenchCluster cluster(det::bench::BuildDir(argv[0]));
  if (auto started = cluster.StartMaster(); !started.ok()) {
    std::fprintf(stderr, "master: %s\n", started.ToString().c_str());
    return 1;
  }
  const std::string uuid = "5c1f0e3a-2b4d-4e6f-8a9b-0c1d2e3f4a5b";
  const fs::path host_path = cluster.dir() / "checkpoints";
  const fs::path source = host_path / uuid;
  const std::string resources = WriteCheckpoint(source, mib);
  if (!RecordCheckpoint(cluster, host_path, uuid, resources)) return 1;

  const std::string rest = cluster.endpoint("rest");
  const fs::path direct = cluster.dir() / "direct";
  const fs::path through_master = cluster.dir() / "master";
  const std::string copy = "cp -r '" + source.string() + "' '" + direct.string() + "'";
  const std::string download = "mkdir -p '" + through_master.string() + "' && curl -sf -H " +
                               "'Authorization: Bearer " + cluster.admin_token() + "' -H " +
                               "'Accept: application/gzip' '" + rest + "/checkpoints/" + uuid +
                               "' | tar -xzf - -C '" + through_master.string() + "'";
  (void)Timed(copy);  // into the page cache: both read it from there
  fs::remove_all(direct);

  const double idle = ResidentMiB(cluster.master_pid());
  PeakMemory peak(cluster.master_pid());
  // A failed curl leaves tar nothing to read: it fails too.
  const double master_seconds = Timed(download);
  const double master_peak = peak.Stop();
  const double direct_seconds = Timed(copy);
  // The stream alone, not extracted: what the master serves, without the client's tar.
  const double stream_seconds =
      Timed("curl -sf -o /dev/null -H 'Authorization: Bearer " + cluster.admin_token() +
            "' -H 'Accept: application/gzip' '" + rest + "/checkpoints/" + uuid + "'");
  if (master_seconds < 0 || direct_seconds < 0) {
    std::fprintf(stderr, "a download failed (MASTER %.2f s, DIRECT %.2f s)\n", master_seconds,
                 direct_seconds);
    return 1;
  }
  const bool same = SameFiles(source, through_master) && SameFiles(source, direct);
  const double megabytes = static_cast<double>(mib) * 1.048576;
  std::printf("checkpoint download, %lld MiB in %d files (shared_fs):\n",
              static_cast<long long>(mib), kFiles);
  std::printf("  %-34s %8.1f MB/s\n", "MASTER (GET /checkpoints, gzip)",
              megabytes / master_seconds);
  std::printf("  %-34s %8.1f MB/s\n", "  its stream alone (curl > /dev/null)",
              megabytes / stream_seconds);
  std::printf("  %-34s %8.1f MB/s  (baseline)\n", "DIRECT (cp -r of the folder)",
              megabytes / direct_seconds);
  std::printf("  MASTER / DIRECT: %.2f (goal >= 0.8)\n", direct_seconds / master_seconds);
  std::printf(
      "  master resident memory: %.1f MiB idle, %.1f MiB at most during it (+%.1f; goal "
      "< 50)\n",
      idle, master_peak, master_peak - idle);
  if (!same) std::fprintf(stderr, "a downloaded copy differs from the original\n");
  return same ? 0 : 1;
}
