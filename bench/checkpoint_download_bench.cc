// Checkpoint download through the master (Determined's MASTER mode: GET /checkpoints/{uuid}, a
// gzipped tar streamed as it is read, what the SDK's Checkpoint.download(mode=MASTER) and
// `det checkpoint download --mode master` fetch) next to DIRECT mode (the client reads the
// storage itself), by Determined's SDK and by the command-line tools, on the same bytes in the
// same run, with the master's resident memory sampled throughout.
//
//   checkpoint_download_bench [--short] [--mib N]
//
// A real det-master over a private PostgreSQL; the checkpoint is N MiB of random bytes (weights
// barely compress) in 4 files, recorded as a trial's COMPLETED checkpoint, once under a shared_fs
// host_path and once in the fake S3 (skipped without /usr/bin/aws). Determined's SDK (from
// ../shared/conformance; skipped, saying so, without it) downloads it with mode MASTER and
// DIRECT; then `curl -H 'Accept: application/gzip' | tar -xz` through the master, its stream
// alone, and the baselines `cp -r` of the folder or `aws s3 cp --recursive`. All read what the
// upload, or an untimed first copy, left in the page cache. Every copy is compared with the
// original. Goal (issue 55): SDK MASTER at least 0.8 of SDK DIRECT's MB/s, the master's memory
// flat (< 50 MB over idle).

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "bench/bench_cluster.h"
#include "bench/determined_library.h"
#include "bench/fakes.h"
#include "bus/catalog/experiments.h"
#include "storage/database.h"
#include "storage/experiments_repo.h"
#include "tests/testing/test_util.h"

namespace {

namespace fs = std::filesystem;
using det::bench::BenchCluster;
using det::bench::DeterminedLibrary;
using det::bench::Timed;
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

// Determined's SDK downloading checkpoint `uuid` into `into` (Checkpoint.download, `mode` MASTER
// or DIRECT) as the admin; the download's own seconds (not the import or the login), or -1.
double SdkDownload(const BenchCluster& cluster, const std::string& library, const std::string& uuid,
                   const std::string& mode, const fs::path& into) {
  const fs::path script = cluster.dir() / "sdk_download.py";
  std::ofstream(script) << R"(import sys, time
from determined.experimental import client
master, password, uuid, into, mode = sys.argv[1:6]
client.login(master=master, user="admin", password=password)
checkpoint = client.get_checkpoint(uuid)
start = time.monotonic()
checkpoint.download(path=into, mode=client.DownloadMode[mode])
print(time.monotonic() - start)
)";
  const fs::path seconds_file = cluster.dir() / "sdk_seconds";
  const std::string command =
      "HOME='" + cluster.dir().string() + "' PYTHONPATH='" + library + "' /usr/bin/python3 '" +
      script.string() + "' '" + cluster.endpoint("rest") + "' " + BenchCluster::kAdminPassword +
      " " + uuid + " '" + into.string() + "' " + mode + " > '" + seconds_file.string() + "'";
  if (std::system(command.c_str()) != 0) return -1;
  double seconds = -1;
  std::ifstream(seconds_file) >> seconds;
  return seconds;
}

// The checkpoint's files in `b` are those in `a` (SDK downloads add metadata.json beside them).
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
// a trial's report would write) in `storage` (a checkpoint_storage mapping, flow style).
bool RecordCheckpoint(BenchCluster& cluster, const std::string& storage, const std::string& uuid,
                      const std::string& resources) {
  zmq::context_t context;
  det::bus::RpcClient client(context, cluster.endpoint("gateway"), cluster.client_security(), {});
  det::bus::ExperimentCreateRequest create;
  create.config_yaml =
      "name: download-bench\nentrypoint: 'true'\n"
      "searcher: {name: single, metric: loss, max_length: {batches: 1}}\n"
      "checkpoint_storage: " +
      storage + "\n";
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

// Where a checkpoint is, and how a client reads it there itself.
struct Store {
  std::string name;                                         // as the rows print it
  std::string storage;                                      // the experiment's checkpoint_storage
  std::string direct;                                       // the DIRECT command's label
  std::function<std::string(const fs::path&)> direct_into;  // the DIRECT command for a folder
};

// One transfer of the checkpoint: what did it, its seconds (-1: it failed), and the folder it
// wrote ("" for a stream thrown away).
struct Transfer {
  std::string label;
  double seconds;
  fs::path copy;
};

// The checkpoint `uuid` (a copy of `original`) in `store` downloaded every way, printed: through
// the master and directly, by Determined's SDK (when `library` is there) and by the command-line
// tools; false when a transfer failed or a copy differs.
bool Measure(BenchCluster& cluster, const Store& store, const std::string& uuid,
             const fs::path& original, int64_t mib, const std::string& library) {
  const auto folder = [&](const std::string& what) { return cluster.dir() / (store.name + what); };
  const std::string url = cluster.endpoint("rest") + "/checkpoints/" + uuid;
  const std::string auth = "-H 'Authorization: Bearer " + cluster.admin_token() +
                           "' -H 'Accept: application/gzip' '" + url + "'";
  const double idle = ResidentMiB(cluster.master_pid());
  PeakMemory peak(cluster.master_pid());
  std::vector<Transfer> transfers;
  if (!library.empty()) {
    for (const char* mode : {"MASTER", "DIRECT"}) {
      const fs::path into = folder(std::string("-sdk-") + mode);
      transfers.push_back({std::string("SDK Checkpoint.download(mode=") + mode + ")",
                           SdkDownload(cluster, library, uuid, mode, into), into});
    }
  }
  // A failed curl leaves tar nothing to read: it fails too.
  transfers.push_back({"GET /checkpoints | tar -xz",
                       Timed("mkdir -p '" + folder("-tar").string() + "' && curl -sf " + auth +
                             " | tar -xzf - -C '" + folder("-tar").string() + "'"),
                       folder("-tar")});
  transfers.push_back({"GET /checkpoints > /dev/null", Timed("curl -sf -o /dev/null " + auth), ""});
  const double master_peak = peak.Stop();
  transfers.push_back({store.direct + " (baseline)", Timed(store.direct_into(folder("-direct"))),
                       folder("-direct")});
  const double megabytes = static_cast<double>(mib) * 1.048576;
  std::printf("%s, %lld MiB in %d files:\n", store.name.c_str(), static_cast<long long>(mib),
              kFiles);
  bool ok = true;
  for (const Transfer& transfer : transfers) {
    if (transfer.seconds < 0) {
      std::printf("  %-40s   failed\n", transfer.label.c_str());
      ok = false;
      continue;
    }
    std::printf("  %-40s %8.1f MB/s\n", transfer.label.c_str(), megabytes / transfer.seconds);
    if (!transfer.copy.empty() && !SameFiles(original, transfer.copy)) {
      std::fprintf(stderr, "%s: the copy by %s differs\n", store.name.c_str(),
                   transfer.label.c_str());
      ok = false;
    }
  }
  if (!ok) return false;
  if (!library.empty()) {
    std::printf("  SDK MASTER / SDK DIRECT: %.2f (goal >= 0.8)\n",
                transfers[1].seconds / transfers[0].seconds);
  }
  std::printf("  master resident memory: %.1f MiB idle, %.1f MiB at most (+%.1f; goal < 50)\n",
              idle, master_peak, master_peak - idle);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t mib = 1024;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--short") mib = 32;
    if (arg == "--mib" && i + 1 < argc) mib = std::stoll(argv[++i]);
  }
  const std::string build = det::bench::BuildDir(argv[0]);
  // The fake S3's keys for everyone: the master reads the bucket with them as with any keys in its
  // environment, and the SDK's DIRECT mode (boto3) with them as a user's own (an experiment's
  // keys are shown to clients as ********).
  for (const auto& [name, value] : {std::pair{"AWS_ACCESS_KEY_ID", "AKIDFAKE"},
                                    {"AWS_SECRET_ACCESS_KEY", "fake-secret"},
                                    {"AWS_DEFAULT_REGION", "us-west-2"},
                                    {"AWS_EC2_METADATA_DISABLED", "true"},
                                    {"AWS_CONFIG_FILE", "/dev/null"},
                                    {"AWS_SHARED_CREDENTIALS_FILE", "/dev/null"}}) {
    setenv(name, value, 1);
  }
  const std::string library = DeterminedLibrary();
  if (library.empty()) {
    std::printf(
        "Determined's SDK: skipped (no ../shared/conformance/determined-0.38.1/harness "
        "that /usr/bin/python3 imports; DET_CONFORMANCE_DIR names another)\n");
  }
  BenchCluster cluster(build);
  if (auto started = cluster.StartMaster(); !started.ok()) {
    std::fprintf(stderr, "master: %s\n", started.ToString().c_str());
    return 1;
  }
  const fs::path host_path = cluster.dir() / "checkpoints";
  const std::string shared_uuid = "5c1f0e3a-2b4d-4e6f-8a9b-0c1d2e3f4a5b";
  const fs::path original = host_path / shared_uuid;
  const std::string resources = WriteCheckpoint(original, mib);
  const Store shared_fs{"shared_fs", "{type: shared_fs, host_path: " + host_path.string() + "}",
                        "cp -r of the folder", [&](const fs::path& into) {
                          return "cp -r '" + original.string() + "' '" + into.string() + "'";
                        }};
  (void)Timed(shared_fs.direct_into(cluster.dir() / "warm"));  // into the page cache
  fs::remove_all(cluster.dir() / "warm");
  bool ok = RecordCheckpoint(cluster, shared_fs.storage, shared_uuid, resources) &&
            Measure(cluster, shared_fs, shared_uuid, original, mib, library);

  if (std::system("/usr/bin/aws --version > /dev/null 2>&1") != 0) {
    std::printf("s3: skipped (no /usr/bin/aws to compare with)\n");
    return ok ? 0 : 1;
  }
  det::bench::FakeChild s3(
      build + "/tests/fake-s3", cluster.dir(), "fake-s3",
      {"--data-dir", (cluster.dir() / "s3-data").string(), "--bucket", "bench"});
  const std::string endpoint = "http://" + s3.address();
  const std::string s3_uuid = "5c1f0e3a-2b4d-4e6f-8a9b-0c1d2e3f4a5c";
  const std::string aws = det::bench::AwsCli(endpoint) + "--recursive ";
  const Store bucket{"s3 (fake-s3)", "{type: s3, bucket: bench, endpoint_url: '" + endpoint + "'}",
                     "aws s3 cp --recursive", [&](const fs::path& into) {
                       return aws + "s3://bench/" + s3_uuid + "/ '" + into.string() +
                              "' > /dev/null";
                     }};
  const bool uploaded = s3.port > 0 && Timed(aws + "'" + original.string() + "' s3://bench/" +
                                             s3_uuid + "/ > /dev/null") >= 0;
  if (!uploaded) std::fprintf(stderr, "s3: the checkpoint could not be put in the fake S3\n");
  ok = uploaded && RecordCheckpoint(cluster, bucket.storage, s3_uuid, resources) &&
       Measure(cluster, bucket, s3_uuid, original, mib, library) && ok;
  return ok ? 0 : 1;
}
