// The submit path as users drive it: `det` started once per command, against a real det-master
// with CURVE on every port (as `det deploy local` runs it) and one det-agent of many artificial
// slots. Each figure is printed beside a baseline measured in the same run:
//
//   start        `det --version` beside `/bin/true` (both spawned and reaped N times)
//   separate     N `det cmd run true` processes, one after another, from the first submission to
//                the last end the master recorded (jobs/s); beside N `sbatch --wrap=true` into a
//                private Slurm of as many CPUs on this host (bench/slurm_cluster.h; the issue's
//                goal is five times Slurm), N raw REQ/REP round trips of the same request frames
//                to a raw REP echo (one connection), and the same with a new CURVE connection per
//                call (what a det without a relay pays); then the same N calls with DET_RELAY=0
//                (each det connecting and shaking hands itself)
//   url          `det experiment list` started S times with only the master's URL and a kept
//                session, beside the same with key files and a token (issue 53's goal: within
//                1 ms of it)
//   parallel     the same N calls from 4 submitters at once
//   array        one `det cmd run --array 1-M true`, to the last end; beside this host spawning
//                and reaping M `true` processes at the same concurrency (the floor any dispatcher
//                here stands on), and one `sbatch --array=1-M --wrap=true`
//
// Without Slurm (or root) the Slurm rows are left out and the benchmark says why.
//
//   submit_bench           N = 1,000, M = 10,000, one agent of 256 slots
//   submit_bench --short   N = 30, M = 50, 32 slots (CI: Slurm's array of 200 took 20 s alone)
//   --only PART            one of start, separate, url, gateway, parallel, array (for profiling)
//   --calls N              N separate calls (and cmd.run calls) instead (for profiling)
//
// Exit status 1 only on a functional failure (a command that failed, a wait past its limit).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <thread>
#include <vector>

#include "bench/bench_cluster.h"
#include "bench/slurm_cluster.h"
#include "bus/catalog/rpc.h"
#include "bus/catalog/tasks.h"
#include "bus/envelope.h"
#include "bus/socket.h"
#include "bus/zap_handler.h"

namespace {

using det::bench::BenchCluster;
using det::bench::RunForOutput;
using det::bench::RunToEnd;
using det::bench::SlurmCluster;
using det::bench::SpawnFloor;
using SteadyClock = std::chrono::steady_clock;
namespace bus = det::bus;

struct Shape {
  int starts, calls, array, slots;
  std::string
      only;  // one part ("start", "separate", "url", "gateway", "parallel", "array"), or all
  bool Runs(const char* part) const { return only.empty() || only == part; }
};

double Seconds(SteadyClock::time_point since) {
  return std::chrono::duration<double>(SteadyClock::now() - since).count();
}

int64_t WallNanos() { return det::UnixNanos(det::RealClock::Instance().WallNow()); }

// Mean milliseconds to start and reap argv, `n` times.
double StartMillis(const std::vector<std::string>& argv, int n,
                   const std::vector<std::string>& env = {}) {
  const auto start = SteadyClock::now();
  for (int i = 0; i < n; ++i) RunToEnd(argv, env);
  return Seconds(start) * 1000 / n;
}

// `det experiment list` started `n` times (each through its relay, as a user's det runs) with only
// the master's URL and a session kept from one login (issue 53: det finds the gateway and trusts
// its key from the URL, then keeps both), beside the same with key files and a token. Printed;
// false when a call failed.
bool UrlOnlyCalls(const BenchCluster& cluster, const std::string& det, int n) {
  const std::filesystem::path config = cluster.dir() / "url-config";
  const std::vector<std::string> url_env = {
      "DET_MASTER=" + cluster.endpoint("rest"), "DET_AUTH_FILE=" + (config / "auth.json").string(),
      "DET_KNOWN_MASTERS_FILE=" + (config / "known_masters.json").string(),
      "DET_CLIENT_KEY_FILE=" + (config / "client.key").string()};
  std::vector<std::string> login_env = url_env;
  login_env.push_back("DET_USER=admin");
  login_env.push_back(std::string("DET_PASS=") + BenchCluster::kAdminPassword);
  const std::vector<std::string> list = {det, "experiment", "list"};
  if (!RunToEnd(list, login_env) || !RunToEnd(list, cluster.DetEnvironment())) {
    std::fprintf(stderr, "det experiment list failed\n");
    return false;
  }
  const double url_ms = StartMillis(list, n, url_env);
  const double keyed_ms = StartMillis(list, n, cluster.DetEnvironment());
  std::printf("  %-34s %9.2f %-8s | %-40s %9.2f | %+.2f ms\n", "det experiment list, URL only",
              url_ms, "ms", "the same with key files and a token", keyed_ms, url_ms - keyed_ms);
  return true;
}

// Waits until every task submitted at or after `since_ns` (or of `array_id`) has ended, `n` in
// all; the last end the master recorded, or -1 (a failure or a wait past `limit`).
int64_t LastEnd(bus::RpcClient& client, const std::string& token, int64_t since_ns, size_t n,
                const std::string& array_id, std::chrono::seconds limit) {
  const auto deadline = SteadyClock::now() + limit;
  while (SteadyClock::now() < deadline) {
    bus::TaskListRequest request;
    request.array_id = array_id;
    auto list = client.Call<bus::TaskListRequest, bus::TaskList>(request, token);
    if (!list.ok()) return -1;
    size_t ended = 0, mine = 0;
    int64_t last = 0;
    for (const auto& task : list->tasks) {
      if (task.submitted_at < since_ns) continue;
      ++mine;
      if (task.state != "TERMINATED") continue;
      if (!task.failure_type.empty()) {
        std::fprintf(stderr, "task %s failed: %s\n", task.id.c_str(), task.message.c_str());
        return -1;
      }
      ++ended;
      last = std::max(last, task.ended_at);
    }
    if (mine >= n && ended == mine) return last;
    // Seldom: listing thousands of tasks costs the master what a submission does.
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  std::fprintf(stderr, "tasks did not end within %lld s\n", static_cast<long long>(limit.count()));
  return -1;
}

// The frames a `det cmd run true` sends, encoded once.
std::vector<zmq::message_t> RequestFrames(const std::string& token) {
  zmq::context_t context;
  zmq::socket_t pair_out(context, zmq::socket_type::pair), pair_in(context, zmq::socket_type::pair);
  pair_in.bind("inproc://frames");
  pair_out.connect("inproc://frames");
  bus::RpcRequest request{bus::RandomId(), token, std::string(bus::CommandRunRequest::kType),
                          bus::Bytes{bus::Encode(bus::CommandRunRequest{{"true"}, 1, "", {}})}};
  bus::Header header;
  header.sender = "det";
  (void)bus::Send(pair_out, {}, header, request);
  std::vector<zmq::message_t> frames;
  bus::ReceiveFrames(pair_in, &frames);
  return frames;
}

// A raw REP echo (libzmq only) on a thread of its own, CURVE as the master runs it.
class RawEcho {
 public:
  RawEcho(const bus::CurveKeyPair& server, const std::string& client_public_key)
      : zap_(context_, std::vector<std::string>{client_public_key}),
        socket_(bus::MakeSocket(context_, zmq::socket_type::rep)) {
    endpoint_ = *bus::Bind(socket_, "tcp://127.0.0.1:0",
                           {bus::SocketSecurity::Mode::kCurveServer, server, "", {}});
    thread_ = std::thread([this] {
      std::vector<zmq::message_t> frames;
      while (!stop_) {
        zmq::pollitem_t item{socket_.handle(), 0, ZMQ_POLLIN, 0};
        if (bus::Poll(&item, 1, std::chrono::milliseconds(50)) == 0) continue;
        frames.clear();
        if (!bus::ReceiveFrames(socket_, &frames)) continue;
        for (size_t i = 0; i < frames.size(); ++i) {
          socket_.send(frames[i],
                       i + 1 < frames.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
        }
      }
    });
  }
  ~RawEcho() {
    stop_ = true;
    thread_.join();
  }
  const std::string& endpoint() const { return endpoint_; }

 private:
  zmq::context_t context_;
  bus::ZapHandler zap_;
  zmq::socket_t socket_;
  std::string endpoint_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// `n` raw REQ/REP round trips of `frames`; a new connection (and CURVE handshake) per call when
// `reconnect`. Calls per second.
double RawRoundTrips(const std::string& endpoint, const bus::SocketSecurity& security,
                     const std::vector<zmq::message_t>& frames, int n, bool reconnect) {
  zmq::context_t context;
  std::unique_ptr<zmq::socket_t> socket;
  std::vector<zmq::message_t> reply;
  const auto start = SteadyClock::now();
  for (int i = 0; i < n; ++i) {
    if (!socket || reconnect) {
      socket = std::make_unique<zmq::socket_t>(bus::MakeSocket(context, zmq::socket_type::req));
      (void)bus::Connect(*socket, endpoint, security);
    }
    for (size_t f = 0; f < frames.size(); ++f) {
      zmq::message_t copy(frames[f].data(), frames[f].size());
      socket->send(copy, f + 1 < frames.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
    }
    zmq::pollitem_t item{socket->handle(), 0, ZMQ_POLLIN, 0};
    while (bus::Poll(&item, 1, std::chrono::milliseconds(1000)) == 0) {
    }
    bus::ReceiveFrames(*socket, &reply);
  }
  return n / Seconds(start);
}

// `n` `det cmd run true` calls from `submitters` processes at once (each runs its share one after
// another); jobs per second from the first submission to the last end, or -1.
double SeparateCalls(const BenchCluster& cluster, bus::RpcClient& client, const std::string& det,
                     int n, int submitters, const std::vector<std::string>& extra_env,
                     double* submits_per_second) {
  std::vector<std::string> env = cluster.DetEnvironment();
  env.insert(env.end(), extra_env.begin(), extra_env.end());
  const int64_t since = WallNanos();
  const auto start = SteadyClock::now();
  std::vector<std::thread> threads;
  std::atomic<int> failed{0};
  for (int s = 0; s < submitters; ++s) {
    threads.emplace_back([&, s] {
      for (int i = s; i < n; i += submitters) {
        if (!RunToEnd({det, "cmd", "run", "true"}, env)) ++failed;
      }
    });
  }
  for (auto& t : threads) t.join();
  *submits_per_second = n / Seconds(start);
  if (failed > 0) {
    std::fprintf(stderr, "%d det cmd run calls failed\n", failed.load());
    return -1;
  }
  const int64_t last =
      LastEnd(client, cluster.admin_token(), since, n, "", std::chrono::seconds(300));
  return last < 0 ? -1 : n / ((last - since) / 1e9);
}

// `n` cmd.run calls over the benchmark's own connection (no process start, no handshake): what the
// master's side of a submission costs. Calls per second, or -1.
double GatewayCalls(bus::RpcClient& client, const std::string& token, int n) {
  const auto start = SteadyClock::now();
  for (int i = 0; i < n; ++i) {
    auto reply = client.Call<bus::CommandRunRequest, bus::CommandRunReply>(
        bus::CommandRunRequest{{"true"}, 1, "", {}}, token);
    if (!reply.ok()) {
      std::fprintf(stderr, "cmd.run: %s\n", reply.status().message().c_str());
      return -1;
    }
  }
  return n / Seconds(start);
}

// One `det cmd run --array 1-M true`; jobs per second to the last end, or -1.
double ArrayCall(const BenchCluster& cluster, bus::RpcClient& client, const std::string& det,
                 int m) {
  const std::vector<std::string> env = cluster.DetEnvironment();
  const int64_t since = WallNanos();
  // "Launched command array ID (M tasks, ...": the array's id, to list only its tasks.
  const std::optional<std::string> said =
      RunForOutput({det, "cmd", "run", "--array", "1-" + std::to_string(m), "true"}, env);
  const std::string kLaunched = "Launched command array ";
  if (!said || said->rfind(kLaunched, 0) != 0) {
    std::fprintf(stderr, "det cmd run --array failed: %s\n", said ? said->c_str() : "");
    return -1;
  }
  const std::string array_id =
      said->substr(kLaunched.size(), said->find(' ', kLaunched.size()) - kLaunched.size());
  const int64_t last =
      LastEnd(client, cluster.admin_token(), since, m, array_id, std::chrono::seconds(600));
  return last < 0 ? -1 : m / ((last - since) / 1e9);
}

// Slurm's side of the separate calls: `n` `sbatch --wrap=true` one after another, from the first
// submission until its queue is found empty (listed every 20 ms, after the last submission).
// Jobs per second, or -1; submissions per second in *submits_per_second.
double SlurmSeparateCalls(const SlurmCluster& slurm, int n, double* submits_per_second) {
  const std::vector<std::string> argv = slurm.Sbatch({"--wrap=true"});
  const auto start = SteadyClock::now();
  for (int i = 0; i < n; ++i) {
    if (!RunToEnd(argv, slurm.ClientEnvironment())) {
      std::fprintf(stderr, "sbatch failed\n");
      return -1;
    }
  }
  *submits_per_second = n / Seconds(start);
  const auto limit = std::chrono::seconds(std::max(120, n));
  if (!slurm.WaitForEmptyQueue(limit, std::chrono::milliseconds(20))) return -1;
  return n / Seconds(start);
}

// One `sbatch --array=1-M --wrap=true`, to its queue found empty (listed every 0.5 s, as det's
// array is). Jobs per second, or -1.
double SlurmArray(const SlurmCluster& slurm, int m) {
  const auto start = SteadyClock::now();
  if (!RunToEnd(slurm.Sbatch({"--array=1-" + std::to_string(m), "--wrap=true"}),
                slurm.ClientEnvironment())) {
    std::fprintf(stderr, "sbatch --array failed\n");
    return -1;
  }
  const auto limit = std::chrono::seconds(std::max(120, m / 5));
  if (!slurm.WaitForEmptyQueue(limit, std::chrono::milliseconds(500))) return -1;
  return m / Seconds(start);
}

void Row(const char* label, double value, const char* unit, const char* baseline_label,
         double baseline) {
  std::printf("  %-34s %9.1f %-8s | %-40s %9.1f | ratio %.2f\n", label, value, unit, baseline_label,
              baseline, baseline > 0 ? value / baseline : 0);
}

int RunBench(const Shape& shape, const std::string& build) {
  BenchCluster cluster(build, "", BenchCluster::Security::kCurve);
  if (det::Status started = cluster.StartMaster(); !started.ok()) {
    std::fprintf(stderr, "%s\n", started.ToString().c_str());
    return 1;
  }
  cluster.StartAgent("bench-0", shape.slots);
  zmq::context_t context;
  bus::RpcClient client(context, cluster.endpoint("gateway"), cluster.client_security(),
                        bus::RpcClientConfig{.timeout = std::chrono::seconds(10)});
  const std::string& token = cluster.admin_token();
  if (cluster.WaitForAgents(client, token, 1, std::chrono::seconds(20)) < 1) {
    std::fprintf(stderr, "the agent did not join\n");
    return 1;
  }
  const std::string det = build + "/cli/det";
  std::printf("submit path: det against a CURVE master, one agent of %d slots\n", shape.slots);

  if (shape.Runs("start")) {
    const double true_ms = StartMillis({"/bin/true"}, shape.starts);
    const double det_ms = StartMillis({det, "--version"}, shape.starts);
    std::printf("  %-34s %9.2f %-8s | %-40s %9.2f | ratio %.2f\n", "det --version start", det_ms,
                "ms", "/bin/true start", true_ms, det_ms / true_ms);
  }

  bus::CurveKeyPair echo_keys = *bus::GenerateCurveKeyPair();
  bus::SocketSecurity echo_client = cluster.client_security();
  echo_client.server_public_key = echo_keys.public_key;
  RawEcho echo(echo_keys, echo_client.own.public_key);
  const std::vector<zmq::message_t> frames = RequestFrames(token);
  const double raw = RawRoundTrips(echo.endpoint(), echo_client, frames, shape.calls, false);

  // Slurm on this host, for the separate calls and the array; its daemons are idle otherwise.
  std::unique_ptr<SlurmCluster> slurm;
  if (shape.Runs("separate") || shape.Runs("array")) {
    auto started = SlurmCluster::Start(shape.slots, shape.array);
    if (started.ok()) {
      slurm = std::move(*started);
    } else {
      std::printf("  (no Slurm baseline: %s)\n", started.status().message().c_str());
    }
  }
  const std::string slurm_label = slurm ? "Slurm " + slurm->version() + ", same host" : "";

  if (shape.Runs("separate")) {
    double slurm_submits = 0, slurm_jobs = 0;
    if (slurm && (slurm_jobs = SlurmSeparateCalls(*slurm, shape.calls, &slurm_submits)) < 0) {
      return 1;
    }
    const double raw_new = RawRoundTrips(echo.endpoint(), echo_client, frames, shape.calls, true);
    double submits = 0;
    const double separate = SeparateCalls(cluster, client, det, shape.calls, 1, {}, &submits);
    if (separate < 0) return 1;
    double direct_submits = 0;  // each det connecting and shaking hands itself
    const double direct =
        SeparateCalls(cluster, client, det, shape.calls, 1, {"DET_RELAY=0"}, &direct_submits);
    if (direct < 0) return 1;
    std::printf("%d separate `det cmd run true` calls, one after another:\n", shape.calls);
    Row("submitted", submits, "calls/s", "raw REQ/REP, same bytes, one connection", raw);
    Row("submitted", submits, "calls/s", "raw REQ/REP, new CURVE connection each", raw_new);
    if (slurm)
      Row("submitted", submits, "calls/s", ("sbatch, " + slurm_label).c_str(), slurm_submits);
    Row("end to end (first submit..last end)", separate, "jobs/s", "raw REQ/REP, one connection",
        raw);
    if (slurm) {
      Row("end to end (first submit..last end)", separate, "jobs/s", slurm_label.c_str(),
          slurm_jobs);
    }
    Row("end to end, DET_RELAY=0 (no relay)", direct, "jobs/s", "raw REQ/REP, one connection", raw);
  }
  if (shape.Runs("url") && !UrlOnlyCalls(cluster, det, shape.starts)) return 1;
  if (shape.Runs("gateway")) {
    const int64_t gateway_since = WallNanos();
    const double gateway = GatewayCalls(client, token, shape.calls);
    if (gateway < 0 ||
        LastEnd(client, token, gateway_since, shape.calls, "", std::chrono::seconds(300)) < 0) {
      return 1;
    }
    Row("cmd.run over one open connection", gateway, "calls/s", "raw REQ/REP, one connection", raw);
  }
  if (shape.Runs("parallel")) {
    double parallel_submits = 0;
    const double parallel =
        SeparateCalls(cluster, client, det, shape.calls, 4, {}, &parallel_submits);
    if (parallel < 0) return 1;
    std::printf("the same from 4 submitters at once:\n");
    Row("end to end", parallel, "jobs/s", "raw REQ/REP, one connection", raw);
  }
  if (shape.Runs("array")) {
    const double slurm_array = slurm ? SlurmArray(*slurm, shape.array) : 0;
    if (slurm_array < 0) return 1;
    const double floor = SpawnFloor(shape.array, shape.slots);
    const double array = ArrayCall(cluster, client, det, shape.array);
    if (array < 0) return 1;
    std::printf("one `det cmd run --array 1-%d true`:\n", shape.array);
    Row("end to end", array, "jobs/s", "spawn+reap `true`, same concurrency", floor);
    if (slurm) {
      Row("end to end", array, "jobs/s", ("sbatch --array, " + slurm_label).c_str(), slurm_array);
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string kParts[] = {"start", "separate", "url", "gateway", "parallel", "array"};
  Shape shape{300, 1000, 10000, 256, ""};
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--short") == 0) {
      shape = Shape{50, 30, 50, 32, shape.only};
    } else if (std::strcmp(argv[i], "--only") == 0 && i + 1 < argc &&
               std::find(std::begin(kParts), std::end(kParts), std::string(argv[i + 1])) !=
                   std::end(kParts)) {
      shape.only = argv[++i];
    } else if (std::strcmp(argv[i], "--calls") == 0 && i + 1 < argc && std::atoi(argv[i + 1]) > 0) {
      shape.calls = std::atoi(argv[++i]);
    } else {
      std::fprintf(
          stderr,
          "usage: submit_bench [--short] [--only start|separate|url|gateway|parallel|array] "
          "[--calls N]\n");
      return 2;
    }
  }
  return RunBench(shape, det::bench::BuildDir(argv[0]));
}
