// End-to-end dispatch benchmark: trivial commands (`true`, one slot each) submitted to a real
// det-master with real det-agents of artificial slots, timed from the first submission to the
// last completion (the master's recorded end times). The baseline, measured in the same run, is
// this machine spawning and reaping the same number of `true` processes directly with the same
// concurrency: the floor any dispatcher on this host stands on.
//
//   dispatch_bench           1,000 commands, 4 agents x 64 slots
//   dispatch_bench --short   100 commands, 2 agents x 16 slots (CI)
//
// Needs the build's det-master and det-agent (DET_BUILD_DIR, default: the parent of this
// binary's folder). Starts a private PostgreSQL in a temporary folder. Exit status 1 only on a
// functional failure (a command that did not succeed, a wait over 120 s).
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "bus/catalog/master.h"
#include "bus/catalog/tasks.h"
#include "bus/rpc_client.h"
#include "common/config.h"
#include "storage/local_postgres.h"

extern char** environ;

namespace {

namespace fs = std::filesystem;
using SteadyClock = std::chrono::steady_clock;

struct Shape {
  int commands, agents, slots;
};

pid_t Spawn(const std::vector<std::string>& argv, const fs::path& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (!log.empty()) {
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  if (posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

void Terminate(pid_t pid) {
  if (pid <= 0) return;
  kill(pid, SIGTERM);
  waitpid(pid, nullptr, 0);
}

// `n` `true` processes, at most `concurrency` at a time: commands per second.
double BaselineSpawn(int n, int concurrency) {
  const auto start = SteadyClock::now();
  int running = 0, started = 0;
  while (started < n || running > 0) {
    while (started < n && running < concurrency) {
      if (Spawn({"true"}, {}) > 0) ++running;
      ++started;
    }
    if (waitpid(-1, nullptr, 0) > 0) --running;
  }
  return n / std::chrono::duration<double>(SteadyClock::now() - start).count();
}

std::string BuildDir(const char* argv0) {
  if (const char* dir = std::getenv("DET_BUILD_DIR")) return dir;
  return fs::absolute(argv0).parent_path().parent_path().string();
}

// Submits the commands and waits for them; commands per second, or -1 on a failure.
double Dispatch(det::bus::RpcClient& client, int n) {
  const int64_t start_ns = det::UnixNanos(det::RealClock::Instance().WallNow());
  std::vector<std::string> ids;
  for (int i = 0; i < n; ++i) {
    auto reply =
        client.Call<det::bus::CommandRunRequest, det::bus::CommandRunReply>({{"true"}, 1, "", {}});
    if (!reply.ok()) {
      std::fprintf(stderr, "submit: %s\n", reply.status().message().c_str());
      return -1;
    }
  }
  const auto deadline = SteadyClock::now() + std::chrono::seconds(120);
  while (SteadyClock::now() < deadline) {
    auto list = client.Call<det::bus::TaskListRequest, det::bus::TaskList>({});
    if (!list.ok()) return -1;
    int64_t last_end = 0;
    int ended = 0, failed = 0;
    for (const auto& task : list->tasks) {
      if (task.state != "TERMINATED") continue;
      ++ended;
      if (!task.failure_type.empty()) ++failed;
      last_end = std::max(last_end, task.ended_at);
    }
    if (ended == n) {
      if (failed > 0) {
        std::fprintf(stderr, "%d commands failed\n", failed);
        return -1;
      }
      return n / ((last_end - start_ns) / 1e9);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::fprintf(stderr, "commands did not finish within 120 s\n");
  return -1;
}

int RunBench(const Shape& shape, const std::string& build) {
  const fs::path dir = fs::temp_directory_path() / ("det-dispatch-" + det::bus::RandomId());
  fs::create_directories(dir);
  auto pg = det::storage::LocalPostgres::Start({(dir / "pg").string()});
  if (!pg.ok()) {
    std::fprintf(stderr, "%s\n", pg.status().ToString().c_str());
    return 1;
  }
  const auto& db = (*pg)->db();
  std::ofstream(dir / "master.yaml")
      << "db:\n  host: " << db.host << "\n  port: " << db.port << "\n  name: " << db.name
      << "\n  user: " << db.user << "\n  password: " << db.password
      << "\nbus:\n  host: 127.0.0.1\n  gateway_port: 0\n  agent_port: 0\n"
         "  event_subscribe_port: 0\n  event_publish_port: 0\n  snapshot_port: 0\n"
         "  security: {plaintext: true}\nlog: {level: warn}\n";
  std::vector<pid_t> pids;
  pids.push_back(Spawn({build + "/master/det-master", "-c", (dir / "master.yaml").string(),
                        "--endpoints-file", (dir / "endpoints.yaml").string()},
                       dir / "master.log"));
  for (int i = 0; i < 100 && !fs::exists(dir / "endpoints.yaml"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  auto endpoints = det::LoadYamlFile((dir / "endpoints.yaml").string());
  int rc = 1;
  if (endpoints.ok()) {
    const std::string agent = (*endpoints)["agent"].as<std::string>();
    for (int i = 0; i < shape.agents; ++i) {
      pids.push_back(
          Spawn({build + "/agent/det-agent", "--plaintext", "--master-port",
                 agent.substr(agent.rfind(':') + 1), "--agent-id", "bench-" + std::to_string(i),
                 "--artificial-slots", std::to_string(shape.slots), "--work-dir",
                 (dir / ("work-" + std::to_string(i))).string(), "--log-level", "warn"},
                dir / "agents.log"));
    }
    zmq::context_t context;
    det::bus::RpcClient client(context, (*endpoints)["gateway"].as<std::string>(), {});
    for (int i = 0; i < 200; ++i) {
      auto agents = client.Call<det::bus::AgentListRequest, det::bus::AgentList>({});
      if (agents.ok() && static_cast<int>(agents->agents.size()) == shape.agents) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    const double baseline = BaselineSpawn(shape.commands, shape.agents * shape.slots);
    const double dispatched = Dispatch(client, shape.commands);
    if (dispatched > 0) {
      std::printf("dispatch: %d commands on %d agents x %d slots\n", shape.commands, shape.agents,
                  shape.slots);
      std::printf("  det (submit -> last completion)   %9.0f commands/s\n", dispatched);
      std::printf("  baseline: raw posix_spawn + wait  %9.0f processes/s\n", baseline);
      std::printf("  ratio det/baseline                %9.2f\n", dispatched / baseline);
      rc = 0;
    }
  } else {
    std::fprintf(stderr, "master did not start; see %s\n", (dir / "master.log").c_str());
  }
  for (auto it = pids.rbegin(); it != pids.rend(); ++it) Terminate(*it);
  pg->reset();
  std::error_code ec;
  fs::remove_all(dir, ec);
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  const bool short_mode = argc > 1 && std::strcmp(argv[1], "--short") == 0;
  const Shape shape = short_mode ? Shape{100, 2, 16} : Shape{1000, 4, 64};
  return RunBench(shape, BuildDir(argv[0]));
}
