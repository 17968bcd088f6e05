// The user-facing gateways against a real det-master with hollow agents registered:
//
//   REST: requests per second and p99 latency of GET /api/v1/agents and GET
//   /api/v1/experiments?limit=100 in Determined's shapes (a user's token on every request), driven
//   by wrk, each next to nginx serving the very same JSON body as a static file in the same run
//   (the baseline: what a fast HTTP server does with no work behind the answer).
//   CLI gateway: round trips (p50, p99) of agent.list and master.info through the real gateway,
//   next to raw libzmq REQ/REP echoing the same bytes on loopback TCP.
//
//   rest_bench          100 agents and 100 experiments, wrk 10 s per target, 5,000 round trips
//   rest_bench --short  10 agents and 10 experiments, 2 s, 500 (CI)
//
// Needs wrk and nginx (scripts/install-deps.sh installs them). Exit status 1 only on a functional
// failure (no master, agents that never register, a tool that does not run).
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "bench/bench_cluster.h"
#include "bench/hollow_agents.h"
#include "bus/catalog/experiments.h"
#include "bus/catalog/master.h"

namespace {

using det::bench::BenchCluster;
using det::bench::FreePort;
using det::bench::HollowAgents;
using SteadyClock = std::chrono::steady_clock;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

struct Shape {
  int agents;
  int wrk_seconds;
  int round_trips;
};

struct WrkResult {
  double rate = -1;    // requests per second; -1 when wrk did not run
  double p99_ms = -1;  // latency's 99th percentile
};

// wrk's "Requests/sec:" and 99% latency (--latency) for `url`.
WrkResult Wrk(const std::string& url, const std::string& token, int seconds) {
  const std::string command = "wrk -t1 -c16 --latency -d" + std::to_string(seconds) + "s" +
                              (token.empty() ? "" : " -H 'Authorization: Bearer " + token + "'") +
                              " '" + url + "' 2>&1";
  FILE* out = popen(command.c_str(), "r");
  if (!out) return {};
  WrkResult result;
  int non_2xx = 0;
  char line[512];
  while (std::fgets(line, sizeof line, out)) {
    std::sscanf(line, " Requests/sec: %lf", &result.rate);
    std::sscanf(line, " Non-2xx or 3xx responses: %d", &non_2xx);
    double value = 0;
    char unit[8] = {0};
    if (std::sscanf(line, " 99%% %lf%7s", &value, unit) == 2) {
      const std::string u = unit;
      result.p99_ms = u == "us" ? value / 1000 : u == "s" ? value * 1000 : value;
    }
  }
  pclose(out);
  if (non_2xx > 0) {
    std::fprintf(stderr, "%s: %d answers were not 2xx\n", url.c_str(), non_2xx);
    return {};
  }
  return result;
}

// nginx serving `root` on 127.0.0.1:`port` (one worker, no access log), or -1.
pid_t StartNginx(const fs::path& dir, int port) {
  std::ofstream(dir / "nginx.conf")
      << "worker_processes 1;\ndaemon off;\npid " << (dir / "nginx.pid").string() << ";\nerror_log "
      << (dir / "nginx-error.log").string()
      << ";\nevents { worker_connections 1024; }\nhttp {\n  access_log off;\n"
      << "  client_body_temp_path " << dir.string()
      << ";\n  server {\n    listen 127.0.0.1:" << port << ";\n    root "
      << (dir / "static").string()
      << ";\n    location / { default_type application/json; }\n  }\n}\n";
  return det::bench::Spawn({"nginx", "-c", (dir / "nginx.conf").string(), "-p", dir.string()},
                           dir / "nginx.log");
}

struct Percentiles {
  double p50_us = 0;
  double p99_us = 0;
};

Percentiles Summarize(std::vector<double> micros) {
  std::sort(micros.begin(), micros.end());
  return {micros[micros.size() / 2], micros[micros.size() * 99 / 100]};
}

// `n` round trips of `call`, in microseconds.
template <class Call>
Percentiles Time(int n, Call call) {
  std::vector<double> micros;
  for (int i = 0; i < n; ++i) {
    const auto start = SteadyClock::now();
    if (!call()) return {-1, -1};
    micros.push_back(std::chrono::duration<double, std::micro>(SteadyClock::now() - start).count());
  }
  return Summarize(std::move(micros));
}

// Raw libzmq REQ/REP on loopback TCP, the reply echoing `bytes`.
Percentiles RawReqRep(int n, const std::string& bytes) {
  zmq::context_t context;
  zmq::socket_t rep(context, zmq::socket_type::rep);
  rep.bind("tcp://127.0.0.1:*");
  const std::string endpoint = rep.get(zmq::sockopt::last_endpoint);
  std::thread server([&] {
    for (int i = 0; i < n; ++i) {
      zmq::message_t request;
      if (!rep.recv(request)) return;
      rep.send(zmq::buffer(bytes), zmq::send_flags::none);
    }
  });
  zmq::socket_t req(context, zmq::socket_type::req);
  req.connect(endpoint);
  const Percentiles result = Time(n, [&] {
    req.send(zmq::buffer(bytes), zmq::send_flags::none);
    zmq::message_t reply;
    return req.recv(reply).has_value();
  });
  server.join();
  return result;
}

// GET `path` from det-master and the same body from nginx, each under wrk; printed side by side.
// False when a target did not answer or a tool did not run.
bool CompareWithNginx(int rest_port, const std::string& token, const std::string& path,
                      int seconds) {
  httplib::Client http("127.0.0.1", rest_port);
  http.set_bearer_token_auth(token);
  auto body = http.Get(path);
  if (!body || body->status != 200) {
    std::fprintf(stderr, "GET %s failed\n", path.c_str());
    return false;
  }
  const fs::path dir = fs::temp_directory_path() / ("det-rest-bench-" + det::bus::RandomId());
  fs::create_directories(dir / "static");
  std::ofstream(dir / "static" / "answer.json") << body->body;
  const int nginx_port = FreePort();
  const pid_t nginx = StartNginx(dir, nginx_port);
  std::this_thread::sleep_for(500ms);
  const WrkResult det = Wrk("http://127.0.0.1:" + std::to_string(rest_port) + path, token, seconds);
  const WrkResult baseline =
      Wrk("http://127.0.0.1:" + std::to_string(nginx_port) + "/answer.json", "", seconds);
  det::bench::Terminate(nginx);
  fs::remove_all(dir);
  if (det.rate <= 0 || baseline.rate <= 0) {
    std::fprintf(stderr, "wrk or nginx did not run (scripts/install-deps.sh installs them)\n");
    return false;
  }
  std::printf("REST GET %s (%zu-byte answer), wrk -t1 -c16 %d s\n", path.c_str(), body->body.size(),
              seconds);
  std::printf("  det-master                    %10.0f requests/s   p99 %7.2f ms\n", det.rate,
              det.p99_ms);
  std::printf("  baseline: nginx, static file  %10.0f requests/s   p99 %7.2f ms\n", baseline.rate,
              baseline.p99_ms);
  std::printf("  ratio det/nginx               %10.2f\n", det.rate / baseline.rate);
  return true;
}

// `count` experiments (one trial of one batch each, paused at once: they wait, run nothing).
bool CreateExperiments(det::bus::RpcClient& client, const std::string& token, int count,
                       const fs::path& checkpoints) {
  for (int i = 0; i < count; ++i) {
    det::bus::ExperimentCreateRequest create;
    create.config_yaml = "name: bench-" + std::to_string(i) +
                         "\nentrypoint: 'true'\ndescription: a listed experiment\nlabels: [bench]\n"
                         "searcher: {name: single, metric: loss, max_length: {batches: 1}}\n"
                         "hyperparameters: {lr: 0.01, layers: 4}\n"
                         "checkpoint_storage: {type: shared_fs, host_path: " +
                         checkpoints.string() + "}\n";
    auto created = client.Call<det::bus::ExperimentCreateRequest, det::bus::ExperimentCreateReply>(
        create, token);
    if (!created.ok()) {
      std::fprintf(stderr, "experiment %d: %s\n", i, created.status().ToString().c_str());
      return false;
    }
    (void)client.Call<det::bus::ExperimentActionRequest, det::bus::ExperimentActionReply>(
        {created->id, "pause"}, token);
  }
  return true;
}

int RunBench(const Shape& shape, const std::string& build) {
  BenchCluster cluster(build);
  if (det::Status started = cluster.StartMaster(); !started.ok()) {
    std::fprintf(stderr, "%s\n", started.ToString().c_str());
    return 1;
  }
  HollowAgents agents(0, shape.agents, cluster.agent_port());
  zmq::context_t context;
  det::bus::RpcClient client(context, cluster.endpoint("gateway"), {});
  const std::string& token = cluster.admin_token();
  const size_t joined = cluster.WaitForAgents(client, token, shape.agents, 60s);
  if (joined < static_cast<size_t>(shape.agents)) {
    std::fprintf(stderr, "only %zu of %d hollow agents joined\n", joined, shape.agents);
    return 1;
  }

  const std::string rest = cluster.endpoint("rest");
  const int rest_port = std::stoi(rest.substr(rest.rfind(':') + 1));
  const fs::path checkpoints =
      fs::temp_directory_path() / ("det-rest-bench-" + det::bus::RandomId());
  fs::create_directories(checkpoints);
  const bool listed = CreateExperiments(client, token, shape.agents, checkpoints);
  std::printf("With %d agents and %d experiments:\n", shape.agents, shape.agents);
  const bool compared =
      listed && CompareWithNginx(rest_port, token, "/api/v1/agents", shape.wrk_seconds) &&
      CompareWithNginx(rest_port, token, "/api/v1/experiments?limit=100", shape.wrk_seconds);
  fs::remove_all(checkpoints);
  if (!compared) return 1;

  const Percentiles list = Time(shape.round_trips, [&] {
    return client.Call<det::bus::AgentListRequest, det::bus::AgentList>({}, token).ok();
  });
  const Percentiles info = Time(shape.round_trips, [&] {
    return client.Call<det::bus::MasterInfoRequest, det::bus::MasterInfo>({}).ok();
  });
  const std::string list_bytes =
      det::bus::Encode(*client.Call<det::bus::AgentListRequest, det::bus::AgentList>({}, token));
  const Percentiles raw_list = RawReqRep(shape.round_trips, list_bytes);
  const Percentiles raw_info = RawReqRep(shape.round_trips, std::string(120, 'x'));
  if (list.p50_us < 0 || info.p50_us < 0) {
    std::fprintf(stderr, "a gateway call failed\n");
    return 1;
  }

  std::printf("CLI gateway round trip (%d calls)      p50 us   p99 us\n", shape.round_trips);
  std::printf("  agent.list (%d agents, token)  %9.0f %8.0f\n", shape.agents, list.p50_us,
              list.p99_us);
  std::printf("  baseline: raw REQ/REP, same bytes %6.0f %8.0f\n", raw_list.p50_us,
              raw_list.p99_us);
  std::printf("  master.info                      %6.0f %8.0f\n", info.p50_us, info.p99_us);
  std::printf("  baseline: raw REQ/REP, 120 bytes  %6.0f %8.0f\n", raw_info.p50_us,
              raw_info.p99_us);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const bool short_mode = argc > 1 && std::string(argv[1]) == "--short";
  const Shape shape = short_mode ? Shape{10, 2, 500} : Shape{100, 10, 5000};
  return RunBench(shape, det::bench::BuildDir(argv[0]));
}
