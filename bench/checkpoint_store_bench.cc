// Checkpoint upload and download through the harness's bucket clients beside the clouds' own CLIs
// against the same fakes in the same run (objects streamed to the fakes' data folders):
//
//   S3    harness/det_storage.py (16 MiB parts, 4 at a time) beside /usr/bin/aws s3 cp (Debian's
//         awscli; its defaults: 8 MiB parts, 10 at a time), against tests/fakes/fake_s3
//   GCS   harness/det_gcs.py (resumable uploads in 16 MiB chunks, MD5 checked; downloads in 16 MiB
//         ranges, 4 at a time) beside `gcloud storage cp` (its defaults, composite uploads off:
//         the fake has no compose), against the fake Cloud Storage of tests/fakes/fake_gce;
//         skipped without gcloud
//
// The harness is timed inside its Python process (upload_file, download_file), the CLIs around
// their processes (a second or two of start-up that weighs only on small files). Each
// direction's MB/s is printed beside the CLI's; the downloaded copies are compared with the
// original (a difference is a failure).
//
//   checkpoint_store_bench           a 1 GiB file (needs 3 GiB in TMPDIR)
//   checkpoint_store_bench --short   24 MiB (CI: two parts, chunks and ranges of the harness)
//
// Exit status 1 only on a functional failure; without python3 or the aws CLI it says so and
// exits 0.
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_cluster.h"
#include "bench/fakes.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using det::bench::AwsCli;
using det::bench::FakeChild;

// Runs `command` with sh; its stdout, and its exit status in `rc`.
std::string Capture(const std::string& command, int* rc) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  const int status = pclose(pipe);
  *rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

void WriteRandomFile(const fs::path& path, size_t size) {
  std::mt19937_64 random(42);
  std::vector<uint64_t> block(1 << 17);  // 1 MiB
  std::ofstream out(path, std::ios::binary);
  for (size_t written = 0; written < size; written += block.size() * 8) {
    for (uint64_t& word : block) word = random();
    out.write(reinterpret_cast<const char*>(block.data()),
              static_cast<std::streamsize>(std::min(size - written, block.size() * 8)));
  }
}

bool SameBytes(const fs::path& a, const fs::path& b) {
  int rc = 0;
  Capture("cmp -s '" + a.string() + "' '" + b.string() + "'", &rc);
  return rc == 0;
}

// Seconds the harness's client took for `action` ("upload" or "download"), or a negative value
// on failure. `open` is the Python expression that opens the bucket (det_storage imported).
double ThroughHarness(const std::string& source_dir, const std::string& open,
                      const std::string& action, const fs::path& file) {
  const std::string script = "import os, sys, time\nsys.path.insert(0, '" + source_dir +
                             "/harness')\nimport det_storage\ns = " + open + "\npath = '" +
                             file.string() +
                             "'\n"
                             "start = time.monotonic()\n"
                             "if sys.argv[1] == 'upload':\n"
                             "    s.upload_file(path, 'harness/blob')\n"
                             "else:\n"
                             "    size = dict(s.list('harness/'))['harness/blob']\n"
                             "    s.download_file('harness/blob', size, path)\n"
                             "print(time.monotonic() - start)\n";
  const fs::path script_file = file.parent_path() / "bench_harness.py";
  std::ofstream(script_file) << script;
  int rc = 0;
  const std::string out = Capture("python3 '" + script_file.string() + "' " + action, &rc);
  return rc == 0 ? std::atof(out.c_str()) : -1;
}

// Seconds `command` took, or a negative value on failure.
double Timed(const std::string& command) {
  const auto start = Clock::now();
  int rc = 0;
  Capture(command + " > /dev/null 2>&1", &rc);
  return rc == 0 ? std::chrono::duration<double>(Clock::now() - start).count() : -1;
}

// gcloud with a configuration of its own in `config`, storage pointed at the fake; composite
// uploads off (the fake has no compose), everything else as gcloud's defaults.
std::string Gcloud(const fs::path& config, const std::string& address) {
  return "env CLOUDSDK_CONFIG=" + config.string() +
         " CLOUDSDK_CORE_DISABLE_PROMPTS=1 CLOUDSDK_CORE_DISABLE_USAGE_REPORTING=true"
         " CLOUDSDK_COMPONENT_MANAGER_DISABLE_UPDATE_CHECK=true"
         " CLOUDSDK_CORE_CHECK_GCE_METADATA=false CLOUDSDK_CORE_PROJECT=det-fake-project"
         " CLOUDSDK_STORAGE_PARALLEL_COMPOSITE_UPLOAD_ENABLED=False"
         " CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE=http://" +
         address + "/storage/v1/ NO_PROXY=127.0.0.1 gcloud ";
}

void PrintRow(const char* direction, size_t bytes, double ours, const char* baseline,
              double theirs) {
  const double mb = static_cast<double>(bytes) / 1e6;
  std::printf("%-9s harness %8.1f MB/s (%6.2f s) | %-18s %8.1f MB/s (%6.2f s) | ratio %.2f\n",
              direction, mb / ours, ours, baseline, mb / theirs, theirs, theirs / ours);
}

// Up, then down, through the harness's client and through `baseline`'s commands (`up`/`down`
// take the local path); the copies must equal the original. Returns the failures.
int Compare(const char* store, const char* baseline, const std::string& source_dir,
            const std::string& open, const fs::path& original, size_t size,
            const std::function<std::string(const std::string&)>& up,
            const std::function<std::string(const std::string&)>& down) {
  const fs::path dir = original.parent_path();
  const fs::path ours_copy = dir / "harness.bin";
  const fs::path their_copy = dir / "baseline.bin";
  const double ours_up = ThroughHarness(source_dir, open, "upload", original);
  const double theirs_up = Timed(up(original.string()));
  const double ours_down = ThroughHarness(source_dir, open, "download", ours_copy);
  const double theirs_down = Timed(down(their_copy.string()));
  std::printf("%s:\n", store);
  if (ours_up < 0 || theirs_up < 0 || ours_down < 0 || theirs_down < 0) {
    std::fprintf(stderr, "a transfer failed: harness %.2f/%.2f, %s %.2f/%.2f\n", ours_up, ours_down,
                 baseline, theirs_up, theirs_down);
    return 1;
  }
  PrintRow("upload", size, ours_up, baseline, theirs_up);
  PrintRow("download", size, ours_down, baseline, theirs_down);
  const bool same = SameBytes(original, ours_copy) && SameBytes(original, their_copy);
  fs::remove(ours_copy);
  fs::remove(their_copy);
  if (!same) std::fprintf(stderr, "a downloaded copy differs from the original\n");
  return same ? 0 : 1;
}

int ThroughS3(const std::string& build, const std::string& source_dir, const fs::path& original,
              size_t size) {
  const fs::path dir = original.parent_path();
  FakeChild fake(build + "/tests/fake-s3", dir, "fake-s3",
                 {"--data-dir", (dir / "s3-data").string(), "--bucket", "bench"});
  if (fake.port <= 0) {
    std::fprintf(stderr, "fake-s3 did not start (%s/tests/fake-s3)\n", build.c_str());
    return 1;
  }
  const std::string endpoint = "http://" + fake.address();
  return Compare(
      "S3 (harness/det_storage.py: 16 MiB parts, 4 at a time)", "aws s3 cp", source_dir,
      "det_storage.S3Bucket('bench', None, 'AKIDFAKE', 'fake-secret', '" + endpoint +
          "', {'AWS_REGION': 'us-west-2'})",
      original, size,
      [&](const std::string& from) { return AwsCli(endpoint) + from + " s3://bench/aws/blob"; },
      [&](const std::string& to) { return AwsCli(endpoint) + "s3://bench/aws/blob " + to; });
}

int ThroughGcs(const std::string& build, const std::string& source_dir, const fs::path& original,
               size_t size) {
  const fs::path dir = original.parent_path();
  const fs::path key = dir / "gcs-key.json";
  FakeChild fake(build + "/tests/fake-gce", dir, "fake-gce",
                 {"--key-file", key.string(), "--gcs-data-dir", (dir / "gcs-data").string(),
                  "--gcs-bucket", "bench"});
  if (fake.port <= 0) {
    std::fprintf(stderr, "fake-gce did not start (%s/tests/fake-gce)\n", build.c_str());
    return 1;
  }
  const std::string gcloud = Gcloud(dir / "gcloud-config", fake.address());
  if (Timed(gcloud + "auth activate-service-account --key-file " + key.string()) < 0) {
    std::fprintf(stderr, "gcloud could not sign in to the fake\n");
    return 1;
  }
  return Compare(
      "GCS (harness/det_gcs.py: resumable, 16 MiB chunks; downloads 16 MiB ranges, 4 at a time)",
      "gcloud storage cp", source_dir,
      "__import__('det_gcs').GcsBucket('bench', None, {'STORAGE_EMULATOR_HOST': '" +
          fake.address() + "', 'GOOGLE_APPLICATION_CREDENTIALS': '" + key.string() + "'})",
      original, size,
      [&](const std::string& from) {
        return gcloud + "storage cp " + from + " gs://bench/gcloud/blob";
      },
      [&](const std::string& to) { return gcloud + "storage cp gs://bench/gcloud/blob " + to; });
}

}  // namespace

int main(int argc, char** argv) {
  const bool short_mode = argc > 1 && std::strcmp(argv[1], "--short") == 0;
  const size_t size = short_mode ? (24u << 20) : (1u << 30);
  const std::string build = det::bench::BuildDir(argv[0]);
  const char* source = std::getenv("DET_SOURCE_DIR");
  const std::string source_dir = source ? source : DET_SOURCE_DIR_DEFAULT;
  int rc = 0;
  Capture("python3 --version > /dev/null 2>&1 && /usr/bin/aws --version > /dev/null 2>&1", &rc);
  if (rc != 0) {
    std::printf(
        "checkpoint_store_bench: needs python3 and the aws CLI (/usr/bin/aws; "
        "scripts/install-deps.sh installs awscli): nothing measured\n");
    return 0;
  }
  const fs::path dir = fs::temp_directory_path() / ("det-ckpt-bench-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path original = dir / "checkpoint.bin";
  WriteRandomFile(original, size);
  std::printf("checkpoint_store_bench: a %zu MiB file through the fakes on loopback\n", size >> 20);
  int failures = ThroughS3(build, source_dir, original, size);
  Capture("gcloud --version > /dev/null 2>&1", &rc);
  if (rc == 0) {
    failures += ThroughGcs(build, source_dir, original, size);
  } else {
    std::printf("GCS: not measured (needs gcloud: google-cloud-cli)\n");
  }
  fs::remove_all(dir);
  return failures == 0 ? 0 : 1;
}
