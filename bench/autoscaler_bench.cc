// autoscaler_bench: how fast the autoscaler reacts and decides. Every figure is printed next to a
// baseline measured in the same run:
//
//   reaction  a `cluster.pending` event published on a real event broker (TCP loopback) to the
//             provider's Launch call inside a real Autoscaler (p50/p99 over N events, each asking
//             for one more instance), next to the bus alone: the same event from the publisher to
//             a plain EventSubscriber on the same broker. The difference is the autoscaler:
//             its batch window (launch_batch_window, 20 ms) and its work. Determined decides on
//             a fixed 5 s loop (up to ~5.5 s after the event); Kubernetes' cluster autoscaler
//             scans every 10 s (~5 s on average).
//   decider   one DecideScale over 10,000 instances (a mix of busy, idle, starting, lost and
//             stopped ones) next to copying its input, the least any decider does.
//   simulator `det-autoscaler simulate` speed in simulated hours per second over a synthetic
//             trace (2,000 jobs in 48 h, up to 20 instances), next to the same trace on a pool
//             of fixed size (min_instances = max_instances: the scaler has nothing to decide).
//
// Usage: autoscaler_bench [--short]. --short: 100 events, 1,000 instances, 200 jobs (CI). The exit
// status is 0 unless something fails functionally (an event that never leads to a launch); timings
// are reported, never asserted.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "autoscaler/autoscaler.h"
#include "autoscaler/scale_decider.h"
#include "autoscaler/simulator.h"
#include "bus/event_broker.h"
#include "bus/event_publisher.h"
#include "bus/event_subscriber.h"
#include "bus/socket.h"

namespace det::bench {
namespace {

using SteadyClock = std::chrono::steady_clock;
constexpr auto kStallTimeout = std::chrono::seconds(10);

struct Percentiles {
  double p50_ms = 0;
  double p99_ms = 0;
};

Percentiles Of(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  if (ms.empty()) return {};
  return {ms[ms.size() / 2], ms[std::min(ms.size() - 1, ms.size() * 99 / 100)]};
}

// When each launch call came.
class LaunchLog {
 public:
  void Add(SteadyClock::time_point at) {
    std::lock_guard lock(mu_);
    calls_.push_back(at);
  }
  size_t size() {
    std::lock_guard lock(mu_);
    return calls_.size();
  }
  SteadyClock::time_point at(size_t i) {
    std::lock_guard lock(mu_);
    return calls_[i];
  }

 private:
  std::mutex mu_;
  std::vector<SteadyClock::time_point> calls_;
};

// Records when Launch is called; launched instances never connect (they stay "starting").
class StopwatchProvider final : public provider::Provider {
 public:
  explicit StopwatchProvider(LaunchLog& log) : log_(log) {}
  Result<std::vector<provider::Instance>> List(const std::string&) override {
    return std::vector<provider::Instance>{};
  }
  provider::LaunchResult Launch(const provider::LaunchRequest& request) override {
    const auto now = SteadyClock::now();
    provider::LaunchResult result;
    for (int i = 0; i < request.count; ++i) {
      result.launched.push_back({"i-" + std::to_string(next_id_++), request.resource_pool,
                                 provider::InstanceState::kStarting, request.offering,
                                 RealClock::Instance().WallNow()});
    }
    log_.Add(now);
    return result;
  }
  Status Terminate(const std::vector<std::string>&) override { return Status::Ok(); }
  std::vector<provider::Offering> Offerings() const override { return {{"bench", "z", false}}; }

 private:
  LaunchLog& log_;
  int next_id_ = 0;
};

int PortOf(const std::string& endpoint) {
  return std::stoi(endpoint.substr(endpoint.rfind(':') + 1));
}

// The bus alone: publish -> a plain subscriber, one event at a time.
std::vector<double> BusLatencies(zmq::context_t& context, const bus::EventBrokerEndpoints& broker,
                                 int events) {
  bus::EventPublisher publisher(context, "bench-bus", RealClock::Instance());
  bus::EventSubscriber subscriber(context, "bench-sub", broker, {}, RealClock::Instance(),
                                  {"cluster.pending"});
  if (!publisher.Connect(broker.publish, {}).ok() || !subscriber.Start().ok()) return {};
  publisher.WaitReady(kStallTimeout);
  std::vector<double> ms;
  std::vector<bus::EventSubscriber::Update> updates;
  const auto wait_for = [&](int32_t slots) {
    const auto deadline = SteadyClock::now() + kStallTimeout;
    while (SteadyClock::now() < deadline) {
      std::vector<zmq::pollitem_t> items;
      for (zmq::socket_t* s : subscriber.sockets())
        items.push_back({s->handle(), 0, ZMQ_POLLIN, 0});
      bus::Poll(items.data(), items.size(), std::chrono::milliseconds(10));
      updates.clear();
      subscriber.Receive(&updates);
      subscriber.Tick(&updates);
      for (const auto& u : updates) {
        if (u.kind != bus::EventSubscriber::Update::Kind::kEvent) continue;
        auto pending = u.event.Decode<bus::ClusterPending>();
        if (pending.ok() && pending->resource_pool == "bus" && pending->pending_slots == slots) {
          return true;
        }
      }
      publisher.Pump();
    }
    return false;
  };
  (void)publisher.Publish(bus::ClusterPending{"bus", 0}, "pending/bus");
  if (!wait_for(0)) return {};
  for (int i = 1; i <= events; ++i) {
    const auto sent = SteadyClock::now();
    (void)publisher.Publish(bus::ClusterPending{"bus", i}, "pending/bus");
    if (!wait_for(i)) return {};
    ms.push_back(std::chrono::duration<double, std::milli>(SteadyClock::now() - sent).count());
  }
  return ms;
}

// A real Autoscaler following the broker; each event asks for one more instance.
std::vector<double> ReactionLatencies(zmq::context_t& context,
                                      const bus::EventBrokerEndpoints& broker, int events) {
  LaunchLog launches;
  autoscaler::AutoscalerConfig config;
  config.event_subscribe_port = PortOf(broker.subscribe);
  config.event_publish_port = PortOf(broker.publish);
  config.snapshot_port = PortOf(broker.snapshot);
  autoscaler::Autoscaler scaler(
      context, config, {}, RealClock::Instance(),
      {{provider::LocalSection()},
       [&launches](const provider::ProviderConfig&, const bus::PoolProviderEvent&) {
         return Result<std::unique_ptr<provider::Provider>>(
             std::make_unique<StopwatchProvider>(launches));
       }});
  bus::EventPublisher master(context, "bench-master", RealClock::Instance());
  if (!scaler.Start().ok() || !master.Connect(broker.publish, {}).ok()) return {};
  master.WaitReady(kStallTimeout);
  (void)master.Publish(
      bus::PoolProviderEvent{"gpu",
                             "{type: local, instance_slots: 1, max_instances: 100000,"
                             " max_launches_per_minute: 100000}",
                             "bench", "127.0.0.1", 1},
      "pool/gpu");
  std::atomic<bool> stop{false};
  std::thread loop([&] { scaler.Run(stop); });
  std::vector<double> ms;
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // the snapshot and the first list
  for (int i = 1; i <= events; ++i) {
    const auto sent = SteadyClock::now();
    (void)master.Publish(bus::ClusterPending{"gpu", i, 0, i, 1}, "pending/gpu");
    const auto deadline = sent + kStallTimeout;
    while (launches.size() < static_cast<size_t>(i) && SteadyClock::now() < deadline) {
      master.Pump();
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    if (launches.size() < static_cast<size_t>(i)) break;
    ms.push_back(std::chrono::duration<double, std::milli>(launches.at(i - 1) - sent).count());
  }
  stop = true;
  loop.join();
  return ms;
}

autoscaler::DeciderInput ManyInstances(int count, WallTime now) {
  autoscaler::DeciderInput input;
  input.now = now;
  input.demand = {count / 10, count / 10, 0};
  for (int i = 0; i < count; ++i) {
    const std::string id = "i-" + std::to_string(i);
    const auto state =
        i % 50 == 0 ? provider::InstanceState::kStopped : provider::InstanceState::kRunning;
    input.instances.push_back(
        {id, "gpu", state, {"p3.8xlarge", "z", i % 3 == 0}, now - std::chrono::minutes(i % 30)});
    switch (i % 5) {
      case 0:
        input.agents[id] = {true, true, now - std::chrono::minutes(i % 11), {}};
        break;
      case 1:
        input.agents[id] = {false, false, {}, now - std::chrono::seconds(10)};
        break;
      case 2:
        break;  // starting, or an orphan by now
      default:
        input.agents[id] = {true, false, {}, {}};
        break;
    }
  }
  return input;
}

template <class F>
double BestMs(int rounds, F&& f) {
  double best = 1e300;
  for (int r = 0; r < rounds; ++r) {
    const auto start = SteadyClock::now();
    f();
    best = std::min(best,
                    std::chrono::duration<double, std::milli>(SteadyClock::now() - start).count());
  }
  return best;
}

// `jobs` jobs spread over two days, 10 min to 2 h each, 1 to 4 slots.
std::vector<autoscaler::TraceJob> SyntheticTrace(int jobs) {
  std::vector<autoscaler::TraceJob> trace;
  for (int i = 0; i < jobs; ++i) {
    trace.push_back({48.0 * 3600 * i / jobs, 600.0 + (i * 7919 % 6600), 1 + i % 4, ""});
  }
  return trace;
}

// Simulated hours per second for the trace on a pool of `min`..20 instances of 4 slots.
double SimulatedHoursPerSecond(const std::vector<autoscaler::TraceJob>& trace, int min) {
  autoscaler::SimulatedPool pool;
  pool.name = "gpu";
  pool.provider.type = "aws";
  pool.provider.slots_per_instance = 4;
  pool.provider.max_instances = 20;
  pool.provider.min_instances = min;
  auto report = autoscaler::Simulate(trace, {pool}, autoscaler::CloudModel{});
  if (!report.ok() || report->finished != report->jobs) return 0;
  return report->simulated_hours / report->wall_seconds;
}

int Run(bool short_mode) {
  const int events = short_mode ? 100 : 1000;
  const int instances = short_mode ? 1000 : 10000;
  zmq::context_t context;
  bus::EventBroker broker(context, RealClock::Instance());
  auto bound = broker.Bind({"tcp://127.0.0.1:0", "tcp://127.0.0.1:0", "tcp://127.0.0.1:0"}, {});
  if (!bound.ok()) {
    std::fprintf(stderr, "broker: %s\n", bound.status().message().c_str());
    return 1;
  }
  broker.Start();

  const std::vector<double> bus_ms = BusLatencies(context, *bound, events);
  const std::vector<double> reaction_ms = ReactionLatencies(context, *bound, events);
  if (bus_ms.size() != static_cast<size_t>(events) ||
      reaction_ms.size() != static_cast<size_t>(events)) {
    std::fprintf(stderr, "FAILED: %zu of %d events reached the bus subscriber, %zu a launch\n",
                 bus_ms.size(), events, reaction_ms.size());
    return 1;
  }
  const Percentiles bus = Of(bus_ms), reaction = Of(reaction_ms);
  std::printf("pending event -> provider launch call (%d events)\n", events);
  std::printf("  %-36s p50 %8.2f ms  p99 %8.2f ms\n", "autoscaler (batch window 20 ms)",
              reaction.p50_ms, reaction.p99_ms);
  std::printf("  %-36s p50 %8.2f ms  p99 %8.2f ms\n", "baseline: the bus alone", bus.p50_ms,
              bus.p99_ms);
  std::printf("  %-36s %s\n", "goal", "p99 under 100 ms (Determined: up to ~5,500 ms)");

  provider::ProviderConfig config;
  config.type = "aws";
  config.max_instances = 2 * instances;
  config.slots_per_instance = 4;
  const autoscaler::DeciderInput input = ManyInstances(instances, RealClock::Instance().WallNow());
  size_t sink = 0;
  const double decide = BestMs(5, [&] {
    const autoscaler::ScaleDecision d = autoscaler::DecideScale(config, input);
    sink += d.terminate.size() + static_cast<size_t>(d.launch);
  });
  const double copy = BestMs(5, [&] {
    const autoscaler::DeciderInput copied = input;
    sink += copied.instances.size();
  });
  std::printf("scale decider over %d instances (best of 5)\n", instances);
  std::printf("  %-36s %8.2f ms\n", "DecideScale", decide);
  std::printf("  %-36s %8.2f ms  (%.1fx)\n", "baseline: copying its input", copy, decide / copy);

  const auto trace = SyntheticTrace(short_mode ? 200 : 2000);
  const double scaled = SimulatedHoursPerSecond(trace, 0);
  const double fixed = SimulatedHoursPerSecond(trace, 20);
  std::printf("simulator (%zu jobs over 48 h)\n", trace.size());
  std::printf("  %-36s %8.0f simulated h/s\n", "autoscaled pool (0..20 instances)", scaled);
  std::printf("  %-36s %8.0f simulated h/s\n", "baseline: fixed pool (20 instances)", fixed);
  return sink > 0 && scaled > 0 && fixed > 0 ? 0 : 1;
}

}  // namespace
}  // namespace det::bench

int main(int argc, char** argv) {
  spdlog::set_level(spdlog::level::warn);  // one line per launch would drown the figures
  const bool short_mode = argc > 1 && std::strcmp(argv[1], "--short") == 0;
  return det::bench::Run(short_mode);
}
