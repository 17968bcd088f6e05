// Container start latency through the agent's docker runtime, beside `docker run` of the same
// image on the same engine in the same run. The engine is the private dockerd that
// scripts/docker-test-engine.sh starts (scripts/test.sh does, as for the real-engine tests); its
// description is <build>/docker-test/engine.env (or DET_TEST_DOCKER_ENV). Without one the
// benchmark says so and exits 0.
//
//   agent    N tasks `det cmd run --image IMG 'sleep 1'`, one after another, on a real det-master
//            and det-agent (container_runtime docker): from the call to the engine's StartedAt
//            (what a user waits for), and the engine's own Created → StartedAt
//   docker   N `docker run -d --network host IMG sleep 1` on the same engine: from the call to
//            StartedAt, and Created → StartedAt
//
//   container_start_bench           N = 20
//   container_start_bench --short   N = 2 (CI: a sample after the first, each way)
//
// Exit status 1 only on a functional failure (a task or container that did not start or end).
#include <sys/wait.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "bench/bench_cluster.h"
#include "common/clock.h"
#include "common/http_client.h"

namespace {

using det::bench::BenchCluster;
namespace fs = std::filesystem;

struct Sample {
  double call_to_started_ms = 0;     // from the call to the engine's StartedAt
  double created_to_started_ms = 0;  // the engine's own timestamps
};

int64_t WallNanos() { return det::UnixNanos(det::RealClock::Instance().WallNow()); }

// What `command` prints on stdout (its exit status in `rc`).
std::string Capture(const std::string& command, int* rc = nullptr) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  const int status = pclose(pipe);
  if (rc != nullptr) *rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

std::map<std::string, std::string> ReadEnvFile(const fs::path& path) {
  std::map<std::string, std::string> values;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (const size_t eq = line.find('='); eq != std::string::npos)
      values[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return values;
}

class Engine {
 public:
  explicit Engine(std::string socket) : socket_(std::move(socket)) {}

  nlohmann::json Get(const std::string& path) {
    det::HttpRequest request;
    request.method = "GET";
    request.url = "http://docker/v1.41" + path;
    request.unix_socket = socket_;
    auto response = http_.Send(request);
    if (!response.ok()) return nullptr;
    return nlohmann::json::parse(response->body, nullptr, false);
  }
  // The inspection of task `task_id`'s container once it has started (up to 60 s); null if not.
  nlohmann::json StartedContainerOfTask(const std::string& task_id) {
    const nlohmann::json filters = {{"label", {"det.task-id=" + task_id}}};
    const std::string list =
        "/containers/json?all=1&filters=" + det::UriEncode(filters.dump(), false);
    for (int i = 0; i < 6000; ++i) {
      const nlohmann::json found = Get(list);
      if (found.is_array() && !found.empty()) {
        nlohmann::json inspected = Get("/containers/" + found[0].value("Id", "") + "/json");
        if (Started(inspected)) return inspected;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return nullptr;
  }
  static bool Started(const nlohmann::json& inspected) {
    return inspected.is_object() &&
           det::ParseRfc3339Utc(inspected["State"].value("StartedAt", "")).value_or(0) > 0;
  }
  const std::string& socket() const { return socket_; }

 private:
  std::string socket_;
  det::HttpClient http_;
};

// The sample of a started container's inspection, its call made at `called_ns`.
Sample SampleOf(const nlohmann::json& inspected, int64_t called_ns) {
  const int64_t created = det::ParseRfc3339Utc(inspected.value("Created", "")).value_or(0);
  const int64_t started =
      det::ParseRfc3339Utc(inspected["State"].value("StartedAt", "")).value_or(0);
  return {(started - called_ns) / 1e6, (started - created) / 1e6};
}

std::string EnvPrefix(const std::vector<std::string>& env) {
  std::string prefix = "env";
  for (const std::string& entry : env) prefix += " '" + entry + "'";
  return prefix + " ";
}

bool ThroughTheAgent(BenchCluster& cluster, Engine& engine, const std::string& image, int n,
                     std::vector<Sample>* samples) {
  const std::string det = EnvPrefix(cluster.DetEnvironment()) + cluster.build() + "/cli/det";
  for (int i = 0; i < n; ++i) {
    const int64_t called = WallNanos();
    const nlohmann::json reply = nlohmann::json::parse(
        Capture(det + " --json cmd run --image " + image + " 'sleep 1' 2>&1"), nullptr, false);
    const std::string task_id = reply.is_object() ? reply.value("task_id", "") : "";
    if (task_id.empty()) {
      std::fprintf(stderr, "det cmd run failed: %s\n", reply.dump().c_str());
      return false;
    }
    const nlohmann::json inspected = engine.StartedContainerOfTask(task_id);
    if (inspected.is_null()) {
      std::fprintf(stderr, "task %s's container did not start in 60 s\n", task_id.c_str());
      return false;
    }
    samples->push_back(SampleOf(inspected, called));
    int rc = 0;
    Capture(det + " task wait " + task_id + " > /dev/null 2>&1", &rc);
    if (rc != 0) {
      std::fprintf(stderr, "det task wait %s failed\n", task_id.c_str());
      return false;
    }
  }
  return true;
}

bool ThroughDockerRun(Engine& engine, const std::string& image, int n,
                      std::vector<Sample>* samples) {
  const std::string docker = "docker -H unix://" + engine.socket() + " ";
  for (int i = 0; i < n; ++i) {
    const int64_t called = WallNanos();
    int rc = 0;
    std::string id = Capture(docker + "run -d --network host " + image + " sleep 1", &rc);
    while (!id.empty() && std::isspace(static_cast<unsigned char>(id.back()))) id.pop_back();
    const nlohmann::json inspected = engine.Get("/containers/" + id + "/json");
    if (rc != 0 || !Engine::Started(inspected)) {
      std::fprintf(stderr, "docker run failed (%d): %s\n", rc, id.c_str());
      return false;
    }
    samples->push_back(SampleOf(inspected, called));
    Capture(docker + "wait " + id + " > /dev/null && " + docker + "rm " + id + " > /dev/null", &rc);
    if (rc != 0) return false;
  }
  return true;
}

double Percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  return values[std::min(values.size() - 1, static_cast<size_t>(p * (values.size() - 1) + 0.5))];
}

void PrintRow(const char* what, const std::vector<Sample>& ours, const std::vector<Sample>& base,
              double Sample::*field) {
  std::vector<double> a, b;
  for (const Sample& s : ours) a.push_back(s.*field);
  for (const Sample& s : base) b.push_back(s.*field);
  std::printf(
      "%-24s agent p50 %7.1f ms max %7.1f ms | docker run p50 %7.1f ms max %7.1f ms | "
      "ratio %.2f\n",
      what, Percentile(a, 0.5), Percentile(a, 1.0), Percentile(b, 0.5), Percentile(b, 1.0),
      Percentile(a, 0.5) / Percentile(b, 0.5));
}

}  // namespace

int main(int argc, char** argv) {
  const bool short_mode = argc > 1 && std::strcmp(argv[1], "--short") == 0;
  const int n = short_mode ? 2 : 20;
  const std::string build = det::bench::BuildDir(argv[0]);
  const char* env_path = std::getenv("DET_TEST_DOCKER_ENV");
  const fs::path env_file =
      env_path ? fs::path(env_path) : fs::path(build) / "docker-test/engine.env";
  std::map<std::string, std::string> env = ReadEnvFile(env_file);
  if (env.empty()) {
    std::printf(
        "container_start_bench: no Docker engine (%s is missing; "
        "scripts/docker-test-engine.sh start %s/docker-test starts one): nothing measured\n",
        env_file.c_str(), build.c_str());
    return 0;
  }
  Engine engine(env["DET_TEST_DOCKER_SOCKET"]);
  const std::string image = env["DET_TEST_DOCKER_IMAGE"];

  BenchCluster cluster(build);
  if (det::Status started = cluster.StartMaster(); !started.ok()) {
    std::fprintf(stderr, "%s\n", started.message().c_str());
    return 1;
  }
  cluster.StartAgent("docker-agent", 4,
                     "container_runtime: docker\ndocker: {socket: " + engine.socket() + "}\n");
  std::vector<Sample> ours, base;
  // One of each first, not counted: the engine's and the page cache's first use.
  std::vector<Sample> warm_up;
  if (!ThroughDockerRun(engine, image, 1, &warm_up) ||
      !ThroughTheAgent(cluster, engine, image, 1, &warm_up) ||
      !ThroughTheAgent(cluster, engine, image, n, &ours) ||
      !ThroughDockerRun(engine, image, n, &base)) {
    return 1;
  }
  std::printf("container start, %d containers each, image %s, %s (vfs storage)\n", n, image.c_str(),
              engine.socket().c_str());
  PrintRow("call -> running", ours, base, &Sample::call_to_started_ms);
  PrintRow("engine create -> running", ours, base, &Sample::created_to_started_ms);
  return 0;
}
