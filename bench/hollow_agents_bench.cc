// Hollow agents (as Kubernetes' kubemark does): many simulated agents in this one process, each a
// real AgentChannelClient with its own TCP connection, joining a real det-master, registering 8
// slots and heartbeating every second. Reports the master's CPU share and resident memory while
// they heartbeat, and how long the master takes to declare a silent agent lost (its configured
// silence limit plus detection delay).
//
// Baseline, measured in the same run: a raw libzmq ROUTER thread answering the same number of
// raw DEALER connections heartbeating at the same rate (its thread CPU time), the least any
// master could spend on that traffic.
//
//   hollow_agents_bench          10,000 agents, 10 s measurement
//   hollow_agents_bench --short  300 agents, 3 s (CI)
//
// Exit status 1 only on a functional failure (agents that never register, no lost event).
#include <sys/resource.h>
#include <time.h>

#include <atomic>
#include <cstring>
#include <functional>
#include <mutex>
#include <set>

#include "bench/bench_cluster.h"
#include "bench/hollow_agents.h"
#include "bus/agent_channel_client.h"
#include "bus/catalog/agent.h"
#include "bus/catalog/master.h"
#include "bus/event_subscriber.h"
#include "bus/socket.h"
#include "common/process.h"

namespace {

using det::bench::BenchCluster;
using det::bench::HollowAgents;
using SteadyClock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr auto kSilenceLimit = 3s;

struct Shape {
  int agents;
  std::chrono::seconds window;
};

double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

// utime + stime of a process, in seconds.
double ProcessCpuSeconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream fields(text.substr(text.rfind(')') + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i == 14 || i == 15) ticks += std::stod(field);
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

double ResidentMiB(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  }
  return 0;
}

// Connections per child process: each end of a ZeroMQ connection costs a socket, a mailbox and a
// TCP descriptor, so 10,000 of them do not fit under one process's descriptor limit.
constexpr int kPerProcess = 4000;

// A child process per group of at most kPerProcess of `n` items, each running `body(first, count,
// control)` where `control` is the read end of a pipe from the parent. Returns (pid, write end).
std::vector<std::pair<pid_t, int>> ForkGroups(
    int n, const std::function<void(int first, int count, int control)>& body) {
  std::vector<std::pair<pid_t, int>> groups;
  for (int first = 0; first < n; first += kPerProcess) {
    int fds[2];
    if (pipe(fds) != 0) break;
    const pid_t pid = fork();
    if (pid == 0) {
      close(fds[1]);
      det::RaiseOpenFileLimit();
      body(first, std::min(kPerProcess, n - first), fds[0]);
      _exit(0);
    }
    close(fds[0]);
    groups.emplace_back(pid, fds[1]);
  }
  return groups;
}

void StopGroups(const std::vector<std::pair<pid_t, int>>& groups) {
  for (const auto& [pid, control] : groups) {
    close(control);
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
}

// The baseline's server, in a child process (each side holds one descriptor per connection):
// a ROUTER that echoes; writes its endpoint, then its thread's CPU share over `window`, to `out`.
[[noreturn]] void RawRouterChild(int out, std::chrono::seconds window) {
  zmq::context_t context;
  context.set(zmq::ctxopt::max_sockets, 100);
  zmq::socket_t router = det::bus::MakeSocket(context, zmq::socket_type::router, {});
  router.bind("tcp://127.0.0.1:0");
  const std::string endpoint = router.get(zmq::sockopt::last_endpoint) + "\n";
  (void)!write(out, endpoint.data(), endpoint.size());
  auto start = SteadyClock::now();
  double start_cpu = 0;
  bool measuring = false;
  zmq::message_t identity, body;
  while (true) {
    zmq::pollitem_t item{router.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, 100ms);
    while (router.recv(identity, zmq::recv_flags::dontwait)) {
      (void)router.recv(body);
      router.send(identity, zmq::send_flags::sndmore);
      router.send(body, zmq::send_flags::none);
    }
    if (!measuring && SteadyClock::now() - start > 3s) {  // after the connections settle
      measuring = true;
      start_cpu = ThreadCpuSeconds();
      start = SteadyClock::now();
    }
    if (measuring && SteadyClock::now() - start >= window) {
      const double share = (ThreadCpuSeconds() - start_cpu) /
                           std::chrono::duration<double>(SteadyClock::now() - start).count();
      const std::string text = std::to_string(share) + "\n";
      (void)!write(out, text.data(), text.size());
      _exit(0);
    }
  }
}

// Baseline: `n` DEALERs heartbeating once a second to a ROUTER that echoes; the ROUTER thread's
// CPU share over `window`. Run before any other thread exists (it forks).
double RawRouterCpuShare(int n, std::chrono::seconds window) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  const pid_t child = fork();
  if (child == 0) {
    close(fds[0]);
    RawRouterChild(fds[1], window);
  }
  close(fds[1]);
  FILE* in = fdopen(fds[0], "r");
  char line[256] = {0};
  if (!in || !std::fgets(line, sizeof line, in)) return -1;
  std::string endpoint(line);
  endpoint.pop_back();
  auto dealers = ForkGroups(n, [&](int, int count, int control) {
    zmq::context_t context;
    context.set(zmq::ctxopt::max_sockets, count + 100);
    std::vector<zmq::socket_t> sockets;
    for (int i = 0; i < count; ++i) {
      sockets.push_back(det::bus::MakeSocket(context, zmq::socket_type::dealer, {}));
      sockets.back().connect(endpoint);
    }
    fcntl(control, F_SETFL, O_NONBLOCK);
    char byte;
    while (read(control, &byte, 1) != 0) {  // until the parent closes the pipe
      const auto round = SteadyClock::now();
      for (auto& dealer : sockets) {
        dealer.send(zmq::str_buffer("heartbeat"), zmq::send_flags::dontwait);
        zmq::message_t reply;
        while (dealer.recv(reply, zmq::recv_flags::dontwait)) {
        }
      }
      std::this_thread::sleep_until(round + 1s);
    }
  });
  char result[256] = {0};
  const double share = std::fgets(result, sizeof result, in) ? std::atof(result) : -1;
  StopGroups(dealers);
  std::fclose(in);
  waitpid(child, nullptr, 0);
  return share;
}

// Seconds from now until the master publishes agent.lost for `agent_id`; -1 after `limit`.
double TimeToLost(BenchCluster& cluster, const std::vector<std::pair<pid_t, int>>& groups,
                  int index, std::chrono::seconds limit) {
  zmq::context_t context;
  det::bus::EventSubscriber subscriber(
      context, "bench", {"", cluster.endpoint("event_subscribe"), cluster.endpoint("snapshot")}, {},
      det::RealClock::Instance(), {"agent.lost"});
  if (!subscriber.Start().ok()) return -1;
  std::vector<det::bus::EventSubscriber::Update> updates;
  const std::string agent_id = "hollow-" + std::to_string(index);
  const auto pump = [&] {
    std::vector<zmq::pollitem_t> items;
    for (zmq::socket_t* s : subscriber.sockets()) items.push_back({s->handle(), 0, ZMQ_POLLIN, 0});
    det::bus::Poll(items.data(), items.size(), 10ms);
    updates.clear();
    subscriber.Receive(&updates);
    subscriber.Tick(&updates);
  };
  for (int i = 0; i < 300 && !subscriber.synced(); ++i) pump();
  const auto start = SteadyClock::now();
  const std::string command = std::to_string(index) + "\n";
  for (const auto& [pid, control] : groups) (void)!write(control, command.data(), command.size());
  while (SteadyClock::now() - start < limit) {
    pump();
    for (const auto& update : updates) {
      if (update.kind != det::bus::EventSubscriber::Update::Kind::kEvent) continue;
      auto lost = update.event.Decode<det::bus::AgentLost>();
      if (lost.ok() && lost->agent_id == agent_id) {
        return std::chrono::duration<double>(SteadyClock::now() - start).count();
      }
    }
  }
  return -1;
}

int RunBench(const Shape& shape, const std::string& build) {
  det::RaiseOpenFileLimit();
  const double baseline = RawRouterCpuShare(shape.agents, shape.window);
  BenchCluster cluster(build, "  heartbeat_interval: 1s\n  agent_silence_limit: 3s\n");
  if (det::Status started = cluster.StartMaster(); !started.ok()) {
    std::fprintf(stderr, "%s\n", started.ToString().c_str());
    return 1;
  }
  const int agent_port = cluster.agent_port();
  auto groups = ForkGroups(shape.agents, [agent_port](int first, int count, int control) {
    HollowAgents agents(first, count, agent_port);
    FILE* commands = fdopen(control, "r");
    char line[64];
    while (commands && std::fgets(line, sizeof line, commands)) agents.Silence(std::atoi(line));
    std::this_thread::sleep_for(std::chrono::hours(1));  // the parent kills the group
  });
  zmq::context_t context;
  det::bus::RpcClient client(context, cluster.endpoint("gateway"), {},
                             det::bus::RpcClientConfig{.timeout = 10s, .attempts = 3});
  const std::string& token = cluster.admin_token();
  const auto join_start = SteadyClock::now();
  size_t joined = 0;
  while (SteadyClock::now() - join_start < 180s) {
    auto list = client.Call<det::bus::AgentListRequest, det::bus::AgentList>({}, token);
    joined = list.ok() ? list->agents.size() : 0;
    if (static_cast<int>(joined) == shape.agents) break;
    std::this_thread::sleep_for(1s);
  }
  if (static_cast<int>(joined) != shape.agents) {
    std::fprintf(stderr, "only %zu of %d hollow agents joined\n", joined, shape.agents);
    StopGroups(groups);
    return 1;
  }
  const double join_s = std::chrono::duration<double>(SteadyClock::now() - join_start).count();
  std::this_thread::sleep_for(2s);  // settle
  const double cpu_before = ProcessCpuSeconds(cluster.master_pid());
  const auto window_start = SteadyClock::now();
  std::this_thread::sleep_for(shape.window);
  const double cpu_share = (ProcessCpuSeconds(cluster.master_pid()) - cpu_before) /
                           std::chrono::duration<double>(SteadyClock::now() - window_start).count();
  const double rss = ResidentMiB(cluster.master_pid());
  const double lost_s = TimeToLost(cluster, groups, shape.agents / 2, 30s);
  StopGroups(groups);
  if (lost_s < 0) {
    std::fprintf(stderr, "no agent.lost event for a silent agent within 30 s\n");
    return 1;
  }
  std::printf("hollow agents: %d agents, 8 slots each, heartbeat 1 s (joined in %.1f s)\n",
              shape.agents, join_s);
  std::printf("  master CPU while they heartbeat      %6.1f %% of one core\n", 100 * cpu_share);
  std::printf("  baseline: raw ROUTER echo thread     %6.1f %% of one core\n", 100 * baseline);
  std::printf("  master resident memory               %6.0f MiB\n", rss);
  const long long limit_s = kSilenceLimit.count();
  std::printf(
      "  silent agent declared lost after     %6.2f s (silence limit %lld s; goal <= %lld s)\n",
      lost_s, limit_s, limit_s + 1);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const bool short_mode = argc > 1 && std::strcmp(argv[1], "--short") == 0;
  const Shape shape = short_mode ? Shape{300, 3s} : Shape{10000, 10s};
  return RunBench(shape, det::bench::BuildDir(argv[0]));
}
