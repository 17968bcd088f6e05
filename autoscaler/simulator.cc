#include "autoscaler/simulator.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <sstream>

#include "autoscaler/cluster_view.h"
#include "autoscaler/pool_scaler.h"

namespace det::autoscaler {
namespace {

constexpr MonoTime kNever = MonoTime::max();

template <class M>
bus::EventSubscriber::Update Local(const M& message, bool tombstone = false) {
  bus::BusEvent event{std::string(M::kType), {}, bus::Encode(message)};
  event.header.tombstone = tombstone;
  return {bus::EventSubscriber::Update::Kind::kEvent, std::move(event)};
}

double Hours(Duration d) { return std::chrono::duration<double>(d).count() / 3600.0; }

struct SimInstance {
  Instance instance;
  int32_t slots = 0;
  MonoTime launched{};
  MonoTime boot_done{};
  MonoTime interrupt_at = kNever;
  bool connected = false;
  int32_t used = 0;
  MonoTime idle_since{};
};

struct SimJob {
  TraceJob spec;
  MonoTime arrival{};
  std::optional<MonoTime> first_start;
  MonoTime finish = kNever;
  std::string on;  // instance id while running
  bool done = false;
};

// The simulated cloud and cluster: instances boot, connect, get interrupted; jobs wait, run and
// finish; the cluster view the scalers read is fed the events the master would publish.
class World {
 public:
  World(const std::vector<SimulatedPool>& pools, const CloudModel& cloud, SimulatedClock& clock)
      : cloud_(cloud), clock_(clock), random_(cloud.seed) {
    for (const SimulatedPool& pool : pools) slots_[pool.name] = pool.provider.slots_per_instance;
  }

  std::vector<Instance> List(const std::string& pool) const {
    std::vector<Instance> out;
    for (const auto& [id, sim] : instances_) {
      if (sim.instance.resource_pool != pool) continue;
      out.push_back(sim.instance);
      out.back().state = sim.connected ? InstanceState::kRunning : InstanceState::kStarting;
    }
    return out;
  }

  LaunchResult Launch(const LaunchRequest& request) {
    LaunchResult result;
    std::uniform_real_distribution<double> unit(0, 1);
    if (request.offering.spot && unit(random_) < cloud_.capacity_error_rate) {
      ++report_.capacity_errors;
      result.error = ProviderError{ProviderErrorKind::kCapacity, "InsufficientInstanceCapacity"};
      return result;
    }
    const MonoTime now = clock_.Now();
    for (int i = 0; i < request.count; ++i) {
      SimInstance sim;
      sim.instance = {"sim-" + std::to_string(++launched_), request.resource_pool,
                      InstanceState::kStarting, request.offering, clock_.WallNow()};
      sim.slots = slots_[request.resource_pool];
      sim.launched = now;
      const double jitter =
          (2 * unit(random_) - 1) * std::chrono::duration<double>(cloud_.boot_jitter).count();
      sim.boot_done = now + cloud_.boot_time +
                      std::chrono::duration_cast<Duration>(std::chrono::duration<double>(jitter));
      if (request.offering.spot && cloud_.spot_interruptions_per_hour > 0) {
        std::exponential_distribution<double> hours(cloud_.spot_interruptions_per_hour);
        sim.interrupt_at = now + std::chrono::duration_cast<Duration>(
                                     std::chrono::duration<double>(hours(random_) * 3600));
      }
      result.launched.push_back(sim.instance);
      instances_.emplace(sim.instance.id, std::move(sim));
    }
    report_.launches += request.count;
    return result;
  }

  void Terminate(const std::vector<std::string>& ids) {
    for (const std::string& id : ids) Remove(id);
  }

  void Arrive(const TraceJob& spec, MonoTime at) {
    jobs_.push_back({spec, at});
    waiting_.push_back(jobs_.size() - 1);
    changed_ = true;
  }

  // Boots, interruptions and completions due by now, then placements.
  void Advance() {
    const MonoTime now = clock_.Now();
    for (auto& [id, sim] : instances_) {
      if (!sim.connected && sim.boot_done <= now) Connect(sim);
    }
    std::vector<std::string> interrupted;
    for (const auto& [id, sim] : instances_) {
      if (sim.interrupt_at <= now) interrupted.push_back(id);
    }
    report_.interruptions += static_cast<int>(interrupted.size());
    for (const std::string& id : interrupted) Remove(id);
    for (size_t j : std::vector<size_t>(running_.begin(), running_.end())) {
      if (jobs_[j].finish <= now) Finish(j);
    }
    if (!std::exchange(changed_, false)) return;  // nothing to place, no new demand
    Schedule();
    PublishDemand();
  }

  MonoTime NextEvent() const {
    MonoTime next = kNever;
    for (const auto& [id, sim] : instances_) {
      if (!sim.connected) next = std::min(next, sim.boot_done);
      next = std::min(next, sim.interrupt_at);
    }
    for (size_t j : running_) next = std::min(next, jobs_[j].finish);
    return next;
  }

  bool WorkDone() const { return waiting_.empty() && running_.empty(); }
  size_t live(const std::string& pool) const { return List(pool).size(); }
  const ClusterView& view() const { return view_; }
  // Pools whose pending work changed since the last call.
  std::vector<std::string> TakeDemandChanges() { return std::exchange(demand_changed_, {}); }

  SimulationReport Report(MonoTime start) {
    const MonoTime now = clock_.Now();
    std::vector<std::string> left;
    for (const auto& [id, sim] : instances_) left.push_back(id);
    for (const std::string& id : left) Remove(id);
    std::vector<double> waits;
    for (const SimJob& job : jobs_) {
      if (job.first_start)
        waits.push_back(std::chrono::duration<double>(*job.first_start - job.arrival).count());
      if (job.done) ++report_.finished;
    }
    std::sort(waits.begin(), waits.end());
    if (!waits.empty()) {
      report_.queue_p50_s = waits[waits.size() / 2];
      report_.queue_p99_s = waits[std::min(waits.size() - 1, waits.size() * 99 / 100)];
    }
    report_.jobs = static_cast<int>(jobs_.size());
    report_.simulated_hours = Hours(now - start);
    return report_;
  }

 private:
  void Connect(SimInstance& sim) {
    sim.connected = true;
    sim.idle_since = clock_.Now();
    changed_ = true;
    view_.Apply(Local(bus::AgentStateEvent{sim.instance.id, "connected", sim.instance.resource_pool,
                                           sim.slots, true}));
    idle_changed_ = true;
  }

  void Remove(const std::string& id) {
    auto it = instances_.find(id);
    if (it == instances_.end()) return;
    SimInstance& sim = it->second;
    const MonoTime now = clock_.Now();
    const double price =
        sim.instance.offering.spot ? cloud_.spot_price_per_hour : cloud_.price_per_hour;
    report_.instance_hours += Hours(now - sim.launched);
    report_.cost += Hours(now - sim.launched) * price;
    if (sim.connected && sim.used == 0) report_.idle_instance_hours += Hours(now - sim.idle_since);
    for (size_t j : std::vector<size_t>(running_.begin(), running_.end())) {
      if (jobs_[j].on != id) continue;
      jobs_[j].on.clear();  // interrupted: starts over
      jobs_[j].finish = kNever;
      running_.erase(j);
      waiting_.push_front(j);
    }
    changed_ = true;
    if (sim.connected) {
      view_.Apply(Local(bus::AgentStateEvent{id, "gone", sim.instance.resource_pool, sim.slots},
                        /*tombstone=*/true));
    }
    instances_.erase(it);
    idle_changed_ = true;
  }

  void Finish(size_t j) {
    SimJob& job = jobs_[j];
    job.done = true;
    running_.erase(j);
    changed_ = true;
    auto it = instances_.find(job.on);
    if (it != instances_.end()) Use(it->second, -job.spec.slots);
  }

  void Use(SimInstance& sim, int32_t slots) {
    const MonoTime now = clock_.Now();
    if (sim.used == 0) report_.idle_instance_hours += Hours(now - sim.idle_since);
    sim.used += slots;
    if (sim.used == 0) sim.idle_since = now;
    idle_changed_ = true;
  }

  void Schedule() {
    for (auto it = waiting_.begin(); it != waiting_.end();) {
      SimJob& job = jobs_[*it];
      SimInstance* room = nullptr;
      for (auto& [id, sim] : instances_) {
        if (sim.connected && sim.instance.resource_pool == job.spec.pool &&
            sim.slots - sim.used >= job.spec.slots) {
          room = &sim;
          break;
        }
      }
      if (!room) {
        ++it;
        continue;
      }
      Use(*room, job.spec.slots);
      job.on = room->instance.id;
      if (!job.first_start) job.first_start = clock_.Now();
      job.finish = clock_.Now() + std::chrono::duration_cast<Duration>(
                                      std::chrono::duration<double>(job.spec.duration_s));
      running_.insert(*it);
      it = waiting_.erase(it);
    }
  }

  void PublishDemand() {
    std::map<std::string, int32_t> pending;
    for (const auto& [pool, slots] : slots_) pending[pool] = 0;
    for (size_t j : waiting_) pending[jobs_[j].spec.pool] += jobs_[j].spec.slots;
    for (const auto& [pool, slots] : pending) {
      if (published_[pool] == slots) continue;
      published_[pool] = slots;
      view_.Apply(Local(bus::ClusterPending{pool, slots, 0, slots > 0 ? 1 : 0, 0}));
      demand_changed_.push_back(pool);
    }
    if (!idle_changed_) return;
    idle_changed_ = false;
    bus::ClusterIdle idle;
    for (const auto& [id, sim] : instances_) {
      if (!sim.connected || sim.used > 0) continue;
      const Duration since = clock_.Now() - sim.idle_since;
      idle.agents.push_back(
          {id, sim.instance.resource_pool,
           UnixNanos(clock_.WallNow() - std::chrono::duration_cast<WallTime::duration>(since))});
    }
    view_.Apply(Local(idle));
  }

  const CloudModel cloud_;
  SimulatedClock& clock_;
  std::mt19937_64 random_;
  std::map<std::string, int32_t> slots_;  // per pool
  std::map<std::string, SimInstance> instances_;
  std::vector<SimJob> jobs_;
  std::deque<size_t> waiting_;
  std::set<size_t> running_;  // indices into jobs_
  bool changed_ = false;      // a job or an instance came or went since the last placement
  int launched_ = 0;
  ClusterView view_;
  std::map<std::string, int32_t> published_;
  std::vector<std::string> demand_changed_;
  bool idle_changed_ = false;
  SimulationReport report_;
};

class SimCloud final : public Provider {
 public:
  SimCloud(World& world, std::vector<Offering> offerings)
      : world_(world), offerings_(std::move(offerings)) {}
  Result<std::vector<Instance>> List(const std::string& pool) override { return world_.List(pool); }
  LaunchResult Launch(const LaunchRequest& request) override { return world_.Launch(request); }
  Status Terminate(const std::vector<std::string>& ids) override {
    world_.Terminate(ids);
    return Status::Ok();
  }
  std::vector<Offering> Offerings() const override { return offerings_; }

 private:
  World& world_;
  std::vector<Offering> offerings_;
};

class QuietReporter final : public ScalingReporter {
 public:
  void Decided(const bus::ScalingDecisionEvent&) override {}
  void InstanceChanged(const bus::InstanceInfo&, bool) override {}
};

std::vector<Offering> OfferingsOf(const SimulatedPool& pool) {
  const Offering on_demand{"sim", "sim-a", false};
  if (!pool.spot) return {on_demand};
  std::vector<Offering> offerings = {{"sim", "sim-a", true}};
  if (pool.provider.spot_fallback == "on_demand") offerings.push_back(on_demand);
  return offerings;
}

Status CheckTrace(std::vector<TraceJob>& trace, const std::vector<SimulatedPool>& pools) {
  if (pools.empty()) return InvalidArgument("the config has no resource pool with a provider");
  for (size_t i = 0; i < trace.size(); ++i) {
    TraceJob& job = trace[i];
    if (!std::isfinite(job.arrival_s) || !std::isfinite(job.duration_s) || job.arrival_s < 0 ||
        job.arrival_s > 1e8 || job.duration_s <= 0 || job.duration_s > 1e8) {
      return InvalidArgument("trace job " + std::to_string(i + 1) +
                             ": arrival_s must be within 0..1e8 and duration_s within (0, 1e8]");
    }
    if (job.pool.empty()) job.pool = pools.front().name;
    auto pool = std::find_if(pools.begin(), pools.end(),
                             [&](const SimulatedPool& p) { return p.name == job.pool; });
    if (pool == pools.end()) {
      return InvalidArgument("trace job " + std::to_string(i + 1) + ": pool \"" + job.pool +
                             "\" has no provider in the config");
    }
    if (job.slots > pool->provider.slots_per_instance) {
      return InvalidArgument(
          "trace job " + std::to_string(i + 1) + ": " + std::to_string(job.slots) +
          " slots do not fit on one instance of "
          "pool " +
          job.pool + " (" + std::to_string(pool->provider.slots_per_instance) + " slots)");
    }
  }
  std::stable_sort(trace.begin(), trace.end(),
                   [](const TraceJob& a, const TraceJob& b) { return a.arrival_s < b.arrival_s; });
  return Status::Ok();
}

}  // namespace

Result<SimulationReport> Simulate(const std::vector<TraceJob>& input,
                                  const std::vector<SimulatedPool>& pools, const CloudModel& cloud,
                                  Duration horizon) {
  std::vector<TraceJob> trace = input;
  DET_RETURN_IF_ERROR(CheckTrace(trace, pools));
  const MonoTime wall_start = RealClock::Instance().Now();  // what the simulation cost
  SimulatedClock clock;
  World world(pools, cloud, clock);
  QuietReporter reporter;
  std::map<std::string, std::unique_ptr<PoolScaler>> scalers;
  for (const SimulatedPool& pool : pools) {
    scalers[pool.name] = std::make_unique<PoolScaler>(
        pool.name, pool.provider, std::make_unique<SimCloud>(world, OfferingsOf(pool)), clock,
        reporter);
  }
  const MonoTime start = clock.Now();
  const auto at = [&](double seconds) {
    return start + std::chrono::duration_cast<Duration>(std::chrono::duration<double>(seconds));
  };
  const MonoTime give_up = at(trace.empty() ? 0 : trace.back().arrival_s) + horizon;
  size_t next = 0;
  while (clock.Now() < give_up) {
    while (next < trace.size() && at(trace[next].arrival_s) <= clock.Now()) {
      world.Arrive(trace[next], at(trace[next].arrival_s));
      ++next;
    }
    world.Advance();
    for (const std::string& pool : world.TakeDemandChanges()) scalers[pool]->DemandChanged();
    MonoTime wake = world.NextEvent();
    bool settled = next == trace.size() && world.WorkDone();
    for (const SimulatedPool& pool : pools) {
      wake = std::min(wake, scalers[pool.name]->Tick(world.view()));
      settled =
          settled && world.live(pool.name) <= static_cast<size_t>(pool.provider.min_instances);
    }
    if (settled) break;
    if (next < trace.size()) wake = std::min(wake, at(trace[next].arrival_s));
    clock.Advance(std::max<Duration>(wake - clock.Now(), std::chrono::milliseconds(1)));
  }
  SimulationReport report = world.Report(start);
  report.wall_seconds =
      std::chrono::duration<double>(RealClock::Instance().Now() - wall_start).count();
  return report;
}

Result<std::vector<TraceJob>> LoadTrace(const std::string& path) {
  std::ifstream in(path);
  if (!in) return InvalidArgument(path + ": cannot read the trace");
  std::vector<TraceJob> trace;
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (line.empty() || line[0] == '#' || line.starts_with("arrival")) continue;
    std::vector<std::string> fields;
    std::stringstream cells(line);
    for (std::string cell; std::getline(cells, cell, ',');) fields.push_back(cell);
    const std::string where = path + ":" + std::to_string(number) + ": ";
    if (fields.size() < 3 || fields.size() > 4) {
      return InvalidArgument(where + "expected arrival_s,duration_s,slots[,pool]");
    }
    TraceJob job;
    try {
      job.arrival_s = std::stod(fields[0]);
      job.duration_s = std::stod(fields[1]);
      job.slots = std::stoi(fields[2]);
    } catch (const std::exception&) {
      return InvalidArgument(where +
                             "arrival_s and duration_s must be numbers, slots a whole number");
    }
    constexpr double kMaxSeconds = 1e8;  // three years: durations stay within 64-bit nanoseconds
    if (!std::isfinite(job.arrival_s) || !std::isfinite(job.duration_s) || job.arrival_s < 0 ||
        job.arrival_s > kMaxSeconds || job.duration_s <= 0 || job.duration_s > kMaxSeconds ||
        job.slots < 1) {
      return InvalidArgument(where +
                             "arrival_s must be within 0..1e8, duration_s within (0, 1e8] and "
                             "slots >= 1");
    }
    if (fields.size() == 4) job.pool = fields[3];
    trace.push_back(std::move(job));
  }
  return trace;
}

Result<std::vector<SimulatedPool>> LoadSimulatedPools(const std::string& master_yaml,
                                                      const std::vector<SectionType>& sections) {
  DET_ASSIGN_OR_RETURN(YAML::Node doc, LoadYamlFile(master_yaml));
  ConfigReader reader(doc);
  reader.AllowOtherKeys();
  std::vector<SimulatedPool> pools;
  for (ConfigReader* item : reader.Items("resource_pools")) {
    item->AllowOtherKeys();
    if (!item->Has("provider")) continue;
    SimulatedPool& pool = pools.emplace_back();
    item->Read("pool_name", &pool.name);
    ConfigReader& provider = item->Child("provider");
    pool.provider = ReadProviderConfig(provider, sections);
    provider.Read("spot", &pool.spot);
  }
  DET_RETURN_IF_ERROR(reader.Finish().WithContext(master_yaml));
  return pools;
}

std::string FormatReports(const std::vector<std::pair<std::string, SimulationReport>>& runs) {
  std::ostringstream out;
  char cell[64];
  const auto row = [&](const char* label,
                       const std::function<std::string(const SimulationReport&)>& value) {
    std::snprintf(cell, sizeof cell, "%-28s", label);
    out << cell;
    for (const auto& [name, report] : runs) {
      std::snprintf(cell, sizeof cell, " %20s", value(report).c_str());
      out << cell;
    }
    out << "\n";
  };
  const auto number = [](double v, const char* format) {
    char text[32];
    std::snprintf(text, sizeof text, format, v);
    return std::string(text);
  };
  std::snprintf(cell, sizeof cell, "%-28s", "");
  out << cell;
  for (const auto& [name, report] : runs) {
    std::snprintf(cell, sizeof cell, " %20s",
                  name.substr(std::max<int>(0, static_cast<int>(name.size()) - 20)).c_str());
    out << cell;
  }
  out << "\n";
  row("cost ($)", [&](const auto& r) { return number(r.cost, "%.2f"); });
  row("instance-hours", [&](const auto& r) { return number(r.instance_hours, "%.2f"); });
  row("idle instance-hours", [&](const auto& r) { return number(r.idle_instance_hours, "%.2f"); });
  row("queueing delay p50 (s)", [&](const auto& r) { return number(r.queue_p50_s, "%.1f"); });
  row("queueing delay p99 (s)", [&](const auto& r) { return number(r.queue_p99_s, "%.1f"); });
  row("jobs finished",
      [&](const auto& r) { return std::to_string(r.finished) + "/" + std::to_string(r.jobs); });
  row("instances launched", [&](const auto& r) { return std::to_string(r.launches); });
  row("capacity errors", [&](const auto& r) { return std::to_string(r.capacity_errors); });
  row("spot interruptions", [&](const auto& r) { return std::to_string(r.interruptions); });
  row("simulated hours", [&](const auto& r) { return number(r.simulated_hours, "%.2f"); });
  row("simulated hours per second", [&](const auto& r) {
    return number(r.simulated_hours / std::max(r.wall_seconds, 1e-9), "%.0f");
  });
  return out.str();
}

int RunSimulateCommand(const SimulateCommand& command) {
  auto trace = LoadTrace(command.trace);
  if (!trace.ok()) {
    std::cerr << "error: " << trace.status().message() << "\n";
    return 2;
  }
  std::vector<std::pair<std::string, SimulationReport>> runs;
  for (const std::string& config : {command.config, command.compare}) {
    if (config.empty()) continue;
    auto pools = LoadSimulatedPools(config, command.sections);
    auto report = pools.ok() ? Simulate(*trace, *pools, command.cloud)
                             : Result<SimulationReport>(pools.status());
    if (!report.ok()) {
      std::cerr << "error: " << report.status().WithContext(config).message() << "\n";
      return 2;
    }
    runs.emplace_back(std::filesystem::path(config).filename().string(), *report);
  }
  std::cout << FormatReports(runs);
  return 0;
}

}  // namespace det::autoscaler
