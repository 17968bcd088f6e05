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
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "bench/bench_cluster.h"
#include "bus/catalog/master.h"
#include "bus/catalog/tasks.h"

namespace {

using det::bench::BenchCluster;
using det::bench::SpawnFloor;
using SteadyClock = std::chrono::steady_clock;

struct Shape {
  int commands, agents, slots;
};

// Submits the commands and waits for them; commands per second, or -1 on a failure.
double Dispatch(det::bus::RpcClient& client, const std::string& token, int n) {
  const int64_t start_ns = det::UnixNanos(det::RealClock::Instance().WallNow());
  std::vector<std::string> ids;
  for (int i = 0; i < n; ++i) {
    auto reply = client.Call<det::bus::CommandRunRequest, det::bus::CommandRunReply>(
        {{"true"}, 1, "", {}}, token);
    if (!reply.ok()) {
      std::fprintf(stderr, "submit: %s\n", reply.status().message().c_str());
      return -1;
    }
  }
  const auto deadline = SteadyClock::now() + std::chrono::seconds(120);
  while (SteadyClock::now() < deadline) {
    auto list = client.Call<det::bus::TaskListRequest, det::bus::TaskList>({}, token);
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
    std::this_thread::sleep_for(std::chrono::milliseconds(250));  // end times are the master's
  }
  std::fprintf(stderr, "commands did not finish within 120 s\n");
  return -1;
}

int RunBench(const Shape& shape, const std::string& build) {
  BenchCluster cluster(build);
  if (det::Status started = cluster.StartMaster(); !started.ok()) {
    std::fprintf(stderr, "%s\n", started.ToString().c_str());
    return 1;
  }
  for (int i = 0; i < shape.agents; ++i)
    cluster.StartAgent("bench-" + std::to_string(i), shape.slots);
  zmq::context_t context;
  det::bus::RpcClient client(context, cluster.endpoint("gateway"), {});
  const std::string& token = cluster.admin_token();
  cluster.WaitForAgents(client, token, shape.agents, std::chrono::seconds(10));
  const double baseline = SpawnFloor(shape.commands, shape.agents * shape.slots);
  const double dispatched = Dispatch(client, token, shape.commands);
  if (dispatched <= 0) return 1;
  std::printf("dispatch: %d commands on %d agents x %d slots\n", shape.commands, shape.agents,
              shape.slots);
  std::printf("  det (submit -> last completion)   %9.0f commands/s\n", dispatched);
  std::printf("  baseline: raw posix_spawn + wait  %9.0f processes/s\n", baseline);
  std::printf("  ratio det/baseline                %9.2f\n", dispatched / baseline);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const bool short_mode = argc > 1 && std::strcmp(argv[1], "--short") == 0;
  const Shape shape = short_mode ? Shape{100, 2, 16} : Shape{1000, 4, 64};
  return RunBench(shape, det::bench::BuildDir(argv[0]));
}
