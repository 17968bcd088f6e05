#pragma once

// The cloud fakes (`fake-ec2`, `fake-gce`, `fake-s3`) as child processes with their admin
// endpoints, the real `aws` and `gcloud` CLIs pointed at them, and the command runner both use.

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/http_client.h"
#include "tests/testing/cluster_fixture.h"
#include "tests/testing/test_util.h"

namespace det::testing {

// A fake (`binary` under the build's tests/) started with `args`, its log and port file in `dir`.
class FakeCloudProcess {
 public:
  FakeCloudProcess(const std::string& binary, const fs::path& dir, std::vector<std::string> args) {
    const fs::path port_file = dir / (binary + ".port");
    fs::remove(port_file);
    std::vector<std::string> argv = {BuildDir() + "/tests/" + binary, "--port-file",
                                     port_file.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    process_ = std::make_unique<Process>(argv, dir / (binary + ".log"));
    Eventually([&] { return fs::exists(port_file); }, std::chrono::seconds(10));
    std::ifstream(port_file) >> port_;
  }
  // SIGTERM first: a fake kills its booted instances on the way out.
  ~FakeCloudProcess() {
    if (process_) process_->Stop(SIGTERM);
  }
  int port() const { return port_; }
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }

  // GET (no body) or POST (a body) of /_fake/`path`; null if it did not answer JSON.
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

// `fake-ec2`, booting user data when `boot`.
class FakeEc2Process : public FakeCloudProcess {
 public:
  FakeEc2Process(const fs::path& dir, bool boot)
      : FakeCloudProcess("fake-ec2", dir, Args(dir, boot)) {}

 private:
  static std::vector<std::string> Args(const fs::path& dir, bool boot) {
    std::vector<std::string> args = {"--work-dir", (dir / "ec2-instances").string(),
                                     "--boot-delay-ms", "100"};
    if (boot) args.push_back("--boot");
    return args;
  }
};

// `fake-gce`, booting startup-scripts when `boot`; its service account's key is key_file(). Cloud
// Storage's bytes go under `dir`/gcs-data; `extra_args` are more flags (--gcs-bucket NAME, ...).
class FakeGceProcess : public FakeCloudProcess {
 public:
  FakeGceProcess(const fs::path& dir, bool boot, std::vector<std::string> extra_args = {})
      : FakeCloudProcess("fake-gce", dir, Args(dir, boot, std::move(extra_args))),
        key_file_(dir / "gce-key.json") {}
  const fs::path& key_file() const { return key_file_; }
  std::string compute_endpoint() const { return endpoint() + "/compute/v1/"; }
  // What CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE takes.
  std::string storage_endpoint() const { return endpoint() + "/storage/v1/"; }

 private:
  static std::vector<std::string> Args(const fs::path& dir, bool boot,
                                       std::vector<std::string> args) {
    args.insert(args.end(), {"--work-dir", (dir / "gce-instances").string(), "--key-file",
                             (dir / "gce-key.json").string(), "--boot-delay-ms", "100",
                             "--gcs-data-dir", (dir / "gcs-data").string()});
    if (boot) args.push_back("--boot");
    return args;
  }
  fs::path key_file_;
};

// `fake-s3` with `buckets` made at start, its objects' bytes under `dir`/s3-data.
class FakeS3Process : public FakeCloudProcess {
 public:
  FakeS3Process(const fs::path& dir, const std::vector<std::string>& buckets,
                std::vector<std::string> extra_args = {})
      : FakeCloudProcess("fake-s3", dir, Args(dir, buckets, std::move(extra_args))) {}

 private:
  static std::vector<std::string> Args(const fs::path& dir, const std::vector<std::string>& buckets,
                                       std::vector<std::string> args) {
    args.insert(args.end(), {"--data-dir", (dir / "s3-data").string()});
    for (const std::string& bucket : buckets) args.insert(args.end(), {"--bucket", bucket});
    return args;
  }
};

struct CommandOutput {
  int exit_code = -1;
  std::string output;  // stdout, and stderr unless it went to `errors`
  std::string errors;
};

// Runs `command` with sh, stderr with stdout, or kept apart in `errors` when `stderr_file` (a
// scratch file) is given.
inline CommandOutput RunCommand(const std::string& command, const fs::path& stderr_file = {}) {
  CommandOutput result;
  const std::string redirect = stderr_file.empty() ? " 2>&1" : " 2>" + stderr_file.string();
  FILE* pipe = popen((command + redirect).c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  size_t n = 0;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) result.output.append(buffer, n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (!stderr_file.empty()) {
    std::ifstream in(stderr_file);
    result.errors.assign(std::istreambuf_iterator<char>(in), {});
  }
  return result;
}

// The Debian package's `aws` (v2) if installed, else whichever is on PATH.
inline std::string AwsCli() { return fs::exists("/usr/bin/aws") ? "/usr/bin/aws" : "aws"; }

// Runs the aws CLI against `endpoint` with the fake's credentials; `args` is shell text, and
// `env` ("NAME=value ...") overrides the defaults.
inline CommandOutput RunAws(const std::string& endpoint, const std::string& args,
                            const std::string& env = "") {
  return RunCommand(
      "env AWS_ACCESS_KEY_ID=AKIDFAKE AWS_SECRET_ACCESS_KEY=fake-secret "
      "AWS_DEFAULT_REGION=us-west-2 AWS_EC2_METADATA_DISABLED=true AWS_PAGER= "
      "AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null " +
      env + " " + AwsCli() + " --endpoint-url " + endpoint + " --output json " + args);
}

// `aws --version` and `gcloud --version`, run once per test process (each start of either CLI
// costs a second or more of CPU): a fixture checks the CLI is there before its first call.
inline const CommandOutput& AwsCliVersion() {
  static const CommandOutput version = RunCommand(AwsCli() + " --version");
  return version;
}
inline const CommandOutput& GcloudVersion() {
  static const CommandOutput version = RunCommand(
      "env CLOUDSDK_CORE_DISABLE_PROMPTS=1 CLOUDSDK_COMPONENT_MANAGER_DISABLE_UPDATE_CHECK=true "
      "gcloud --version");
  return version;
}

// Runs `gcloud args` with its own configuration in `config_dir`, offline but for the fake: the
// compute endpoint overridden, prompts, usage reporting, update checks and metadata-server
// lookups off, the project set. `env` ("NAME=value ...") adds or overrides variables.
inline CommandOutput RunGcloud(const fs::path& config_dir, const std::string& compute_endpoint,
                               const std::string& args, const fs::path& stderr_file = {},
                               const std::string& env = "") {
  return RunCommand(
      "env CLOUDSDK_CONFIG=" + config_dir.string() +
          " CLOUDSDK_CORE_DISABLE_PROMPTS=1 CLOUDSDK_CORE_DISABLE_USAGE_REPORTING=true"
          " CLOUDSDK_COMPONENT_MANAGER_DISABLE_UPDATE_CHECK=true "
          "CLOUDSDK_SURVEY_DISABLE_PROMPTS=true"
          " CLOUDSDK_METRICS_ENVIRONMENT=det-tests CLOUDSDK_CORE_CHECK_GCE_METADATA=false"
          " CLOUDSDK_AUTH_SERVICE_ACCOUNT_DISABLE_ID_TOKEN_REFRESH=true"
          " CLOUDSDK_API_ENDPOINT_OVERRIDES_COMPUTE=" +
          compute_endpoint +
          " CLOUDSDK_CORE_PROJECT=det-fake-project NO_PROXY=127.0.0.1 no_proxy=127.0.0.1 " + env +
          " gcloud " + args,
      stderr_file);
}

}  // namespace det::testing
