// Checkpoint upload and download through S3, the harness's client beside the aws CLI against the
// same fake S3 (tests/fakes/fake_s3, objects streamed to its data folder) in the same run:
//
//   det_storage   harness/det_storage.py (the harness's S3 client: 16 MiB parts, 4 at a time),
//                 timed inside its Python process (upload_file, download_file)
//   aws s3 cp     /usr/bin/aws (Debian's awscli; its defaults: 8 MiB parts, 10 at a time), timed
//                 around the process (about a second of start-up that weighs only on small files)
//
// Each direction's MB/s is printed beside the aws CLI's; the downloaded copies are compared with
// the original (a difference is a failure).
//
//   checkpoint_store_bench           a 1 GiB file (needs 3 GiB in TMPDIR)
//   checkpoint_store_bench --short   64 MiB (CI)
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
#include <random>
#include <string>
#include <thread>

#include "bench/bench_cluster.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

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

// The fake S3 as a child process, its port read from its port file.
struct FakeS3 {
  pid_t pid = -1;
  int port = 0;
  FakeS3(const std::string& build, const fs::path& dir) {
    const fs::path port_file = dir / "s3.port";
    pid = fork();
    if (pid == 0) {
      const std::string binary = build + "/tests/fake-s3";
      const std::string data = (dir / "s3-data").string();
      const std::string port_path = port_file.string();
      freopen((dir / "fake-s3.log").c_str(), "w", stdout);
      execl(binary.c_str(), binary.c_str(), "--port-file", port_path.c_str(), "--data-dir",
            data.c_str(), "--bucket", "bench", static_cast<char*>(nullptr));
      _exit(127);
    }
    for (int i = 0; i < 100 && !fs::exists(port_file); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    std::ifstream(port_file) >> port;
  }
  ~FakeS3() { det::bench::Terminate(pid); }
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port); }
};

// Seconds det_storage took for `action` ("upload" or "download"), or a negative value on failure.
double ThroughDetStorage(const std::string& source_dir, const std::string& endpoint,
                         const std::string& action, const fs::path& file) {
  const std::string script =
      "import os, sys, time\n"
      "sys.path.insert(0, '" +
      source_dir +
      "/harness')\n"
      "import det_storage\n"
      "s = det_storage.S3Bucket('bench', None, 'AKIDFAKE', 'fake-secret', '" +
      endpoint +
      "', {'AWS_REGION': 'us-west-2'})\n"
      "path = '" +
      file.string() +
      "'\n"
      "start = time.monotonic()\n"
      "if sys.argv[1] == 'upload':\n"
      "    s.upload_file(path, 'det_storage/blob')\n"
      "else:\n"
      "    size = dict(s.list('det_storage/'))['det_storage/blob']\n"
      "    s.download_file('det_storage/blob', size, path)\n"
      "print(time.monotonic() - start)\n";
  const fs::path script_file = file.parent_path() / "bench_det_storage.py";
  std::ofstream(script_file) << script;
  int rc = 0;
  const std::string out = Capture("python3 '" + script_file.string() + "' " + action, &rc);
  return rc == 0 ? std::atof(out.c_str()) : -1;
}

// Seconds `aws s3 cp from to` took, or a negative value on failure.
double ThroughAwsCli(const std::string& endpoint, const std::string& from, const std::string& to) {
  const auto start = Clock::now();
  int rc = 0;
  Capture(
      "env AWS_ACCESS_KEY_ID=AKIDFAKE AWS_SECRET_ACCESS_KEY=fake-secret "
      "AWS_DEFAULT_REGION=us-west-2 AWS_EC2_METADATA_DISABLED=true "
      "AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null "
      "/usr/bin/aws --endpoint-url " +
          endpoint + " s3 cp --no-progress '" + from + "' '" + to + "' > /dev/null",
      &rc);
  return rc == 0 ? std::chrono::duration<double>(Clock::now() - start).count() : -1;
}

void PrintRow(const char* direction, size_t bytes, double ours, double aws) {
  const double mb = static_cast<double>(bytes) / 1e6;
  std::printf(
      "%-9s det_storage %8.1f MB/s (%6.2f s) | aws s3 cp %8.1f MB/s (%6.2f s) | ratio %.2f\n",
      direction, mb / ours, ours, mb / aws, aws, aws / ours);
}

}  // namespace

int main(int argc, char** argv) {
  const bool short_mode = argc > 1 && std::strcmp(argv[1], "--short") == 0;
  const size_t size = short_mode ? (64u << 20) : (1u << 30);
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
  int failures = 0;
  {
    FakeS3 fake(build, dir);
    if (fake.port <= 0) {
      std::fprintf(stderr, "fake-s3 did not start (%s/tests/fake-s3)\n", build.c_str());
      fs::remove_all(dir);
      return 1;
    }
    const fs::path original = dir / "checkpoint.bin";
    WriteRandomFile(original, size);
    std::printf("checkpoint_store_bench: a %zu MiB file through the fake S3 on loopback\n",
                size >> 20);
    const double ours_up = ThroughDetStorage(source_dir, fake.endpoint(), "upload", original);
    const double aws_up = ThroughAwsCli(fake.endpoint(), original.string(), "s3://bench/aws/blob");
    const fs::path ours_copy = dir / "det_storage.bin";
    const fs::path aws_copy = dir / "aws.bin";
    const double ours_down = ThroughDetStorage(source_dir, fake.endpoint(), "download", ours_copy);
    const double aws_down =
        ThroughAwsCli(fake.endpoint(), "s3://bench/aws/blob", aws_copy.string());
    if (ours_up < 0 || aws_up < 0 || ours_down < 0 || aws_down < 0) {
      std::fprintf(stderr, "a transfer failed: det_storage %.2f/%.2f, aws %.2f/%.2f\n", ours_up,
                   ours_down, aws_up, aws_down);
      ++failures;
    } else {
      PrintRow("upload", size, ours_up, aws_up);
      PrintRow("download", size, ours_down, aws_down);
      if (!SameBytes(original, ours_copy) || !SameBytes(original, aws_copy)) {
        std::fprintf(stderr, "a downloaded copy differs from the original\n");
        ++failures;
      }
    }
  }
  fs::remove_all(dir);
  return failures == 0 ? 0 : 1;
}
