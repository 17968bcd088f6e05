// The master's HTTP server under the load that used to stall it, each figure beside a baseline
// measured in the same run:
//
//   idle     GET /api/v1/master (p50, p99) while N idle connections are open (half of them with
//            half a request line sent), beside the same request with none open
//   parked   M preemption long polls of one trial run parked at once: the master's threads and
//            resident memory beside the same master before them; the time from `experiment
//            pause` to each poll answered (p50, p99) beside one poll's alone
//   runs     R trial runs (random searches of 100 trials) each waiting in its own preemption long
//            poll (as Determined's library waits, 60 s at a time): the same figures, R
//            allocations in the board's one batched question per tick; the wake-up is timed from
//            the first of the experiments' pauses
//
//   http_bench           N = 5,000, M = 2,000, R = 1,000
//   http_bench --short   N = 500, M = 200, R = 20 (CI)
//   ... --runs R         another R
//
// Needs the build's det-master and det-agent (DET_BUILD_DIR). Exit status 1 only on a functional
// failure (no master, a run that does not start, a poll that is not answered).
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "bench/bench_cluster.h"
#include "bus/catalog/experiments.h"

namespace {

using det::bench::BenchCluster;
using SteadyClock = std::chrono::steady_clock;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

struct Shape {
  int idle;
  int parked;
  int runs;
};

int Connect(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in remote{};
  remote.sin_family = AF_INET;
  remote.sin_port = htons(static_cast<uint16_t>(port));
  ::inet_pton(AF_INET, "127.0.0.1", &remote.sin_addr);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&remote), sizeof remote) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

void Send(int fd, const std::string& text) { (void)::send(fd, text.data(), text.size(), 0); }

// Reads one answer whose body is a JSON object (until its closing brace); "" past `deadline`.
std::string ReadAnswer(int fd, SteadyClock::time_point deadline) {
  std::string got;
  while (SteadyClock::now() < deadline) {
    const size_t body = got.find("\r\n\r\n");
    if (body != std::string::npos && got.find('}', body) != std::string::npos) return got;
    pollfd p{fd, POLLIN, 0};
    ::poll(&p, 1, 20);
    if (!(p.revents & POLLIN)) continue;
    char buf[4096];
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return "";
    got.append(buf, static_cast<size_t>(n));
  }
  return "";
}

std::pair<double, double> P50P99(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return {values[values.size() / 2], values[values.size() * 99 / 100]};
}

// `n` GET /api/v1/master on fresh connections: microseconds each.
std::vector<double> MasterInfoTimes(int port, int n) {
  const std::string request = "GET /api/v1/master HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  std::vector<double> micros;
  for (int i = 0; i < n; ++i) {
    const auto start = SteadyClock::now();
    const int fd = Connect(port);
    Send(fd, request);
    if (ReadAnswer(fd, start + 10s).empty()) return {};
    micros.push_back(std::chrono::duration<double, std::micro>(SteadyClock::now() - start).count());
    ::close(fd);
  }
  return micros;
}

struct ProcessFigures {
  int threads = 0;
  double rss_mb = 0;
};

ProcessFigures FiguresOf(pid_t pid) {
  ProcessFigures figures;
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.starts_with("Threads:")) figures.threads = std::atoi(line.c_str() + 8);
    if (line.starts_with("VmRSS:")) figures.rss_mb = std::atof(line.c_str() + 6) / 1024;
  }
  return figures;
}

// A trial run's allocation and its token.
struct RunIdentity {
  std::string allocation;
  std::string token;
};

// The allocation and token of each of `n` trial runs, written by their entrypoints as
// `<prefix>-<trial id>` files; fewer if they did not all start within five minutes.
std::vector<RunIdentity> RunIdentities(const fs::path& dir, const std::string& prefix, int n) {
  std::vector<RunIdentity> runs;
  for (int i = 0; i < 3000 && static_cast<int>(runs.size()) < n; ++i) {
    runs.clear();
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (!entry.path().filename().string().starts_with(prefix + "-")) continue;
      RunIdentity run;
      std::ifstream in(entry.path());
      for (std::string line; std::getline(in, line);) {
        if (line.starts_with("DET_SESSION_TOKEN=")) run.token = line.substr(18);
        if (line.starts_with("DET_ALLOCATION_ID=")) run.allocation = line.substr(18);
      }
      if (!run.token.empty() && !run.allocation.empty()) runs.push_back(run);
    }
    if (static_cast<int>(runs.size()) < n) std::this_thread::sleep_for(100ms);
  }
  return runs;
}

// An experiment of `trials` trials whose runs each write their environment to
// `dir/<prefix>-<trial id>` and sleep; its id, or 0. Like a trial that checkpoints before it
// exits, a run outlives the pause's SIGTERM (by the kill's grace), so its polls are answered
// "preempt", not "no such run".
int64_t SleepingExperiment(det::bus::RpcClient& client, const std::string& token,
                           const fs::path& dir, const std::string& prefix, int trials) {
  const std::string env = (dir / prefix).string() + "-$DET_TRIAL_ID";
  const std::string config =
      "name: http-bench\nentrypoint: trap '' TERM; env > " + env + ".tmp && mv " + env + ".tmp " +
      env + " && sleep 600\nsearcher: {name: random, metric: loss, max_trials: " +
      std::to_string(trials) + ", max_concurrent_trials: " + std::to_string(trials) +
      "}\nresources: {slots_per_trial: 1}\ncheckpoint_storage: {type: shared_fs, host_path: " +
      (dir / "checkpoints").string() + "}\n";
  // A model definition of one file (trial runs unpack one before their entrypoint).
  fs::create_directories(dir / "model");
  std::ofstream(dir / "model" / "README") << "http_bench\n";
  const std::string tar = (dir / "model.tgz").string();
  if (std::system(("tar czf " + tar + " -C " + (dir / "model").string() + " .").c_str()) != 0) {
    return 0;
  }
  std::ifstream in(tar, std::ios::binary);
  const std::string archive((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto created = client.Call<det::bus::ExperimentCreateRequest, det::bus::ExperimentCreateReply>(
      {config, det::bus::Bytes{archive}}, token);
  if (!created.ok()) std::fprintf(stderr, "experiment: %s\n", created.status().message().c_str());
  return created.ok() ? created->id : 0;
}

// Parks `n` preemption polls, the i-th of run i % runs.size() (with the allocation token as
// Determined's library sends it), pauses the experiment, and returns each poll's wake-up time in
// microseconds from the pause (empty on a failure). `figures` is taken while they are parked.
std::vector<double> ParkAndPause(int port, const std::vector<RunIdentity>& runs,
                                 det::bus::RpcClient& client, const std::string& admin,
                                 const std::vector<int64_t>& experiments, int n, pid_t master,
                                 ProcessFigures* figures) {
  if (runs.empty()) return {};
  std::vector<int> polls;
  for (int i = 0; i < n; ++i) {
    const RunIdentity& run = runs[static_cast<size_t>(i) % runs.size()];
    const int fd = Connect(port);
    if (fd < 0) return {};
    Send(fd, "GET /api/v1/allocations/" + run.allocation +
                 "/signals/preemption?timeout_seconds=60 HTTP/1.1\r\nHost: x\r\n"
                 "Grpc-Metadata-x-allocation-token: Bearer " +
                 run.token + "\r\n\r\n");
    polls.push_back(fd);
  }
  std::this_thread::sleep_for(2s);  // all read and parked
  *figures = FiguresOf(master);
  const auto paused_at = SteadyClock::now();
  for (int64_t experiment : experiments) {
    (void)client.Call<det::bus::ExperimentActionRequest, det::bus::ExperimentActionReply>(
        {experiment, "pause"}, admin);
  }
  std::vector<double> micros;
  std::vector<pollfd> waiting;
  for (int fd : polls) waiting.push_back({fd, POLLIN, 0});
  std::vector<std::string> got(polls.size());
  size_t answered = 0;
  while (answered < polls.size() && SteadyClock::now() < paused_at + 30s) {
    ::poll(waiting.data(), waiting.size(), 10);
    for (size_t i = 0; i < waiting.size(); ++i) {
      if (waiting[i].fd < 0 || !(waiting[i].revents & POLLIN)) continue;
      char buf[4096];
      const ssize_t r = ::recv(waiting[i].fd, buf, sizeof buf, 0);
      if (r > 0) got[i].append(buf, static_cast<size_t>(r));
      if (r <= 0 || got[i].find('}') != std::string::npos) {
        micros.push_back(
            std::chrono::duration<double, std::micro>(SteadyClock::now() - paused_at).count());
        if (got[i].find("\"preempt\":true") == std::string::npos) return {};
        ::close(waiting[i].fd);
        waiting[i].fd = -1;
        ++answered;
      }
    }
  }
  return answered == polls.size() ? micros : std::vector<double>{};
}

int RunBench(const Shape& shape, const std::string& build) {
  BenchCluster cluster(build);
  // Every connection here comes from 127.0.0.1: the per-address cap must let them all in.
  cluster.AddConfig("http: {max_connections_per_peer: 20000, max_connections: 20000}\n");
  if (det::Status started = cluster.StartMaster(); !started.ok()) {
    std::fprintf(stderr, "%s\n", started.ToString().c_str());
    return 1;
  }
  const std::string rest = cluster.endpoint("rest");
  const int port = std::stoi(rest.substr(rest.rfind(':') + 1));

  const auto alone = MasterInfoTimes(port, 200);
  std::vector<int> idle;
  for (int i = 0; i < shape.idle; ++i) {
    const int fd = Connect(port);
    if (fd < 0) break;
    if (i % 2 == 0) Send(fd, "GET /api/v1/mas");
    idle.push_back(fd);
  }
  const auto crowded = MasterInfoTimes(port, 200);
  for (int fd : idle) ::close(fd);
  if (alone.empty() || crowded.empty()) {
    std::fprintf(stderr, "GET /api/v1/master was not answered\n");
    return 1;
  }
  const auto [alone50, alone99] = P50P99(alone);
  const auto [crowd50, crowd99] = P50P99(crowded);
  std::printf("GET /api/v1/master on a new connection           p50 us   p99 us\n");
  std::printf("  with %5zu idle or half-sent connections open %8.0f %8.0f\n", idle.size(), crowd50,
              crowd99);
  std::printf("  baseline: none open                          %8.0f %8.0f\n", alone50, alone99);

  // Each run holds its slot for the kill's grace after its pause: a slot for every run.
  cluster.StartAgent("bench-poll", 2 + shape.runs);
  zmq::context_t context;
  det::bus::RpcClient client(
      context, cluster.endpoint("gateway"), {},
      det::bus::RpcClientConfig{
          .timeout = 120s, .attempts = 1});  // creating 1,000 trials takes a while; not idempotent
  const std::string& admin = cluster.admin_token();
  const fs::path dir = fs::temp_directory_path() / ("det-http-bench-" + det::bus::RandomId());
  fs::create_directories(dir);
  // As /tmp is: a root agent's trial runs (as `nobody`, its default_task_user) write here.
  fs::permissions(dir, fs::perms(01777));
  const int64_t one = SleepingExperiment(client, admin, dir, "one", 1);
  ProcessFigures before = FiguresOf(cluster.master_pid()), unused;
  const auto single = ParkAndPause(port, RunIdentities(dir, "one", 1), client, admin, {one},
                                   /*n=*/1, cluster.master_pid(), &unused);
  const int64_t many = SleepingExperiment(client, admin, dir, "many", 1);
  ProcessFigures parked;
  const auto wakeups = ParkAndPause(port, RunIdentities(dir, "many", 1), client, admin, {many},
                                    shape.parked, cluster.master_pid(), &parked);
  // Experiments of at most 100 trials each (a search's trials are made as it is created).
  std::vector<int64_t> searches;
  for (int made = 0; made < shape.runs; made += 100) {
    searches.push_back(
        SleepingExperiment(client, admin, dir, "each", std::min(100, shape.runs - made)));
  }
  const bool each = std::find(searches.begin(), searches.end(), 0) == searches.end();
  const std::vector<RunIdentity> runs = RunIdentities(dir, "each", shape.runs);
  ProcessFigures waiting_runs;
  const ProcessFigures before_runs = FiguresOf(cluster.master_pid());
  const auto run_wakeups = ParkAndPause(port, runs, client, admin, searches, shape.runs,
                                        cluster.master_pid(), &waiting_runs);
  fs::remove_all(dir);
  if (one == 0 || many == 0 || !each || single.empty() || wakeups.empty() || run_wakeups.empty()) {
    std::fprintf(stderr, "the trial runs did not start or their polls were not all answered\n");
    return 1;
  }
  const auto [wake50, wake99] = P50P99(wakeups);
  std::printf("%d preemption long polls parked at once          threads   RSS MB\n", shape.parked);
  std::printf("  det-master with them parked                  %8d %8.1f\n", parked.threads,
              parked.rss_mb);
  std::printf("  baseline: the same master before              %8d %8.1f\n", before.threads,
              before.rss_mb);
  std::printf("from experiment pause to each poll answered      p50 ms   p99 ms\n");
  std::printf("  %5d polls                                  %8.1f %8.1f\n", shape.parked,
              wake50 / 1000, wake99 / 1000);
  std::printf("  baseline: one poll alone                     %8.1f %8.1f\n", single[0] / 1000,
              single[0] / 1000);
  const auto [runs50, runs99] = P50P99(run_wakeups);
  std::printf("%d trial runs each in its own long poll           threads   RSS MB\n", shape.runs);
  std::printf("  det-master with them waiting                 %8d %8.1f\n", waiting_runs.threads,
              waiting_runs.rss_mb);
  std::printf("  baseline: the same master with the runs, no poll %4d %8.1f\n", before_runs.threads,
              before_runs.rss_mb);
  std::printf("from pausing their %zu experiments to each run's poll answered p50 ms p99 ms\n",
              searches.size());
  std::printf("  %5d runs                                   %8.1f %8.1f\n", shape.runs,
              runs50 / 1000, runs99 / 1000);
  std::printf("  baseline: one poll alone                     %8.1f %8.1f\n", single[0] / 1000,
              single[0] / 1000);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const bool short_mode = argc > 1 && std::strcmp(argv[1], "--short") == 0;
  Shape shape = short_mode ? Shape{500, 200, 20} : Shape{5000, 2000, 1000};
  // `--runs R` (after the mode): another count of waiting runs.
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--runs") == 0) shape.runs = std::max(1, std::atoi(argv[i + 1]));
  }
  return RunBench(shape, det::bench::BuildDir(argv[0]));
}
