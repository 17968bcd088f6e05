#pragma once

// The `fake-ec2` binary as a child process (tests/fakes/fake_ec2.h), its admin endpoints, and the
// real `aws` CLI pointed at it.

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "common/http_client.h"
#include "tests/testing/cluster_fixture.h"
#include "tests/testing/test_util.h"

namespace det::testing {

class FakeEc2Process {
 public:
  // Starts fake-ec2 (booting user data when `boot`) with its log and folders under `dir`.
  FakeEc2Process(const fs::path& dir, bool boot) {
    const fs::path port_file = dir / "fake-ec2.port";
    fs::remove(port_file);
    std::vector<std::string> argv = {BuildDir() + "/tests/fake-ec2",
                                     "--port-file",
                                     port_file.string(),
                                     "--work-dir",
                                     (dir / "ec2-instances").string(),
                                     "--boot-delay-ms",
                                     "100"};
    if (boot) argv.push_back("--boot");
    process_ = std::make_unique<Process>(argv, dir / "fake-ec2.log");
    Eventually([&] { return fs::exists(port_file); }, std::chrono::seconds(10));
    std::ifstream(port_file) >> port_;
  }
  // SIGTERM first: the fake kills its booted instances on the way out.
  ~FakeEc2Process() {
    if (process_) process_->Stop(SIGTERM);
  }
  int port() const { return port_; }
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }

  nlohmann::json Admin(const std::string& path, const nlohmann::json& body = nullptr) {
    HttpRequest request;
    request.method = body.is_null() ? "GET" : "POST";
    request.url = endpoint() + "/_fake/" + path;
    request.body = body.is_null() ? "" : body.dump();
    Result<HttpResponse> response = http_.Send(request);
    if (!response.ok()) return nullptr;
    return nlohmann::json::parse(response->body, nullptr, false);
  }

 private:
  std::unique_ptr<Process> process_;
  int port_ = 0;
  HttpClient http_;
};

// The Debian package's `aws` (v2) if installed, else whichever is on PATH.
inline std::string AwsCli() { return fs::exists("/usr/bin/aws") ? "/usr/bin/aws" : "aws"; }

struct CommandOutput {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

// Runs the aws CLI against `endpoint` with the fake's credentials; `args` is shell text, and
// `env` ("NAME=value ...") overrides the defaults.
inline CommandOutput RunAws(const std::string& endpoint, const std::string& args,
                            const std::string& env = "") {
  const std::string command =
      "env AWS_ACCESS_KEY_ID=AKIDFAKE AWS_SECRET_ACCESS_KEY=fake-secret "
      "AWS_DEFAULT_REGION=us-west-2 AWS_EC2_METADATA_DISABLED=true AWS_PAGER= "
      "AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null " +
      env + " " + AwsCli() + " --endpoint-url " + endpoint + " --output json " + args + " 2>&1";
  CommandOutput result;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  size_t n = 0;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) result.output.append(buffer, n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

}  // namespace det::testing
