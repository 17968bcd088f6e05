#pragma once

// What the storage benchmarks share: the project's cloud fakes (fake-s3, fake-gce) run as child
// processes, and the aws CLI pointed at the fake S3.

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/processes.h"

namespace det::bench {

// A fake (fake-s3, fake-gce) as a child process, its port read from its port file (0 when it
// did not start); stopped when this goes.
struct FakeChild {
  pid_t pid = -1;
  int port = 0;
  FakeChild(const std::string& binary, const std::filesystem::path& dir, const std::string& name,
            std::vector<std::string> args) {
    const std::filesystem::path port_file = dir / (name + ".port");
    args.insert(args.begin(), {binary, "--port-file", port_file.string()});
    std::fflush(nullptr);  // the child must not print what the parent has buffered
    pid = fork();
    if (pid == 0) {
      std::vector<char*> argv;
      for (std::string& arg : args) argv.push_back(arg.data());
      argv.push_back(nullptr);
      if (std::freopen((dir / (name + ".log")).c_str(), "w", stdout) == nullptr) _exit(126);
      execv(binary.c_str(), argv.data());
      _exit(127);
    }
    for (int i = 0; i < 100 && !std::filesystem::exists(port_file); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    std::ifstream(port_file) >> port;
  }
  ~FakeChild() { Terminate(pid); }
  FakeChild(const FakeChild&) = delete;
  FakeChild& operator=(const FakeChild&) = delete;
  std::string address() const { return "127.0.0.1:" + std::to_string(port); }
};

// `aws s3 cp` (Debian's awscli) with the fake's keys and `endpoint`, and no configuration of the
// machine's; the caller appends the options and paths.
inline std::string AwsCli(const std::string& endpoint) {
  return "env AWS_ACCESS_KEY_ID=AKIDFAKE AWS_SECRET_ACCESS_KEY=fake-secret "
         "AWS_DEFAULT_REGION=us-west-2 AWS_EC2_METADATA_DISABLED=true "
         "AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null "
         "/usr/bin/aws --endpoint-url " +
         endpoint + " s3 cp --no-progress ";
}

}  // namespace det::bench
