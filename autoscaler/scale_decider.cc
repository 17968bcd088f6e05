#include "autoscaler/scale_decider.h"

#include <algorithm>
#include <set>

#include "common/strings.h"

namespace det::autoscaler {
namespace {

enum class Kind { kStopped, kSpotRequested, kStarting, kOrphan, kIdle, kBusy, kDisconnected };

struct Classified {
  const Instance* instance;
  Kind kind;
  WallTime since;  // idle: idle since; disconnected: left at
};

Kind ClassifyUnconnected(const ProviderConfig& config, const DeciderInput& input,
                         const Instance& instance, WallTime* since) {
  auto left = input.disconnected_since.find(instance.id);
  auto agent = input.agents.find(instance.id);
  if (left != input.disconnected_since.end()) {
    *since = left->second;
    return Kind::kDisconnected;
  }
  if (agent != input.agents.end()) {  // lost, and the master still holds its place
    *since = agent->second.lost_at.value_or(input.now);
    return Kind::kDisconnected;
  }
  if (input.now - instance.launched_at < config.max_agent_starting_period) {
    return instance.state == InstanceState::kSpotRequested ? Kind::kSpotRequested : Kind::kStarting;
  }
  return Kind::kOrphan;
}

Classified Classify(const ProviderConfig& config, const DeciderInput& input,
                    const Instance& instance) {
  if (instance.state == InstanceState::kStopped) return {&instance, Kind::kStopped, {}};
  auto agent = input.agents.find(instance.id);
  if (agent != input.agents.end() && agent->second.connected) {
    return agent->second.idle ? Classified{&instance, Kind::kIdle, agent->second.idle_since}
                              : Classified{&instance, Kind::kBusy, {}};
  }
  WallTime since{};
  const Kind kind = ClassifyUnconnected(config, input, instance, &since);
  return {&instance, kind, since};
}

// Collects terminations, each instance once.
class Terminations {
 public:
  void Add(const Instance& instance, std::string reason, bool never_connected = false) {
    if (!ids_.insert(instance.id).second) return;
    orders_.push_back({instance.id, std::move(reason), never_connected});
  }
  bool Has(const std::string& id) const { return ids_.contains(id); }
  int size() const { return static_cast<int>(orders_.size()); }
  std::vector<TerminateOrder> Take() { return std::move(orders_); }

 private:
  std::set<std::string> ids_;
  std::vector<TerminateOrder> orders_;
};

// Idle instances that pending work could use: as many as the pending slots need.
int ProtectedIdle(const ProviderConfig& config, const PoolDemand& demand) {
  return DesiredInstances(config, demand);
}

void TerminateIdle(const ProviderConfig& config, const DeciderInput& input,
                   std::vector<Classified> idle, int live, Terminations* out) {
  std::sort(idle.begin(), idle.end(),
            [](const Classified& a, const Classified& b) { return a.since < b.since; });
  // The most recently idle are kept for pending work; the longest idle go first.
  const int keep =
      std::clamp<int>(ProtectedIdle(config, input.demand), 0, static_cast<int>(idle.size()));
  idle.resize(idle.size() - keep);
  for (const Classified& c : idle) {
    if (live - out->size() <= config.min_instances) break;
    if (input.now - c.since < config.max_idle_agent_period) continue;
    out->Add(*c.instance, "idle for more than max_idle_agent_period (" +
                              FormatDuration(config.max_idle_agent_period) + ")");
  }
}

// Above max_instances: pending spot requests, then idle, then disconnected, then the newest.
// Instances whose agents run work are never taken: what cannot be trimmed without them is named
// in `refused`.
void TrimAboveMax(const ProviderConfig& config, std::vector<Classified> all, int live,
                  Terminations* out, std::string* refused) {
  auto rank = [](Kind kind) {
    switch (kind) {
      case Kind::kSpotRequested:
        return 0;
      case Kind::kIdle:
        return 1;
      case Kind::kDisconnected:
        return 2;
      default:
        return 3;
    }
  };
  std::stable_sort(all.begin(), all.end(), [&](const Classified& a, const Classified& b) {
    if (rank(a.kind) != rank(b.kind)) return rank(a.kind) < rank(b.kind);
    return a.instance->launched_at > b.instance->launched_at;
  });
  const std::string reason = "above max_instances (" + std::to_string(config.max_instances) + ")";
  std::vector<std::string> spared;
  for (const Classified& c : all) {
    if (live - out->size() - static_cast<int>(spared.size()) <= config.max_instances) break;
    if (c.kind == Kind::kBusy) {
      spared.push_back(c.instance->id);
    } else {
      out->Add(*c.instance, reason);
    }
  }
  if (!spared.empty()) {
    *refused = "not terminating " + std::to_string(spared.size()) + " instance(s) " + reason +
               " that run work: " + Join(spared, ", ") + " (ended when idle)";
  }
}

// Connected agents of the pool that no listed instance accounts for: instances of spot requests
// that the cloud's lists do not show as such yet (EC2 tags them only once the request is visible
// as fulfilled).
int UnlistedAgents(const DeciderInput& input) {
  std::set<std::string> listed;
  for (const Instance& instance : input.instances) listed.insert(instance.id);
  int unlisted = 0;
  for (const auto& [id, agent] : input.agents) unlisted += agent.connected && !listed.contains(id);
  return unlisted;
}

}  // namespace

int DesiredInstances(const ProviderConfig& config, const PoolDemand& demand) {
  if (config.slots_per_instance <= 0) return demand.pending_aux_tasks > 0 ? 1 : 0;
  // In 64 bits and never negative: the demand comes off the bus.
  const int64_t slots = std::max<int64_t>(demand.pending_slots, 0);
  const int64_t per_instance = config.slots_per_instance;
  return static_cast<int>(
      std::min<int64_t>((slots + per_instance - 1) / per_instance, 1'000'000'000));
}

ScaleDecision DecideScale(const ProviderConfig& config, const DeciderInput& input) {
  std::vector<Classified> all;
  std::vector<Classified> idle;
  std::vector<Classified> spot_requests;
  Terminations out;
  int starting = 0;
  for (const Instance& instance : input.instances) {
    const Classified c = Classify(config, input, instance);
    all.push_back(c);
    switch (c.kind) {
      case Kind::kStopped:
        out.Add(instance, "stopped");
        break;
      case Kind::kOrphan:
        // An unfulfilled spot request is a shortage, not an instance that failed to start.
        out.Add(instance,
                instance.state == InstanceState::kSpotRequested
                    ? "spot request unfulfilled within max_agent_starting_period (" +
                          FormatDuration(config.max_agent_starting_period) + ")"
                    : "never connected within max_agent_starting_period (" +
                          FormatDuration(config.max_agent_starting_period) + ")",
                instance.state != InstanceState::kSpotRequested);
        break;
      case Kind::kDisconnected:
        if (input.now - c.since >= config.max_disconnected_period) {
          out.Add(instance, "disconnected for more than max_disconnected_period (" +
                                FormatDuration(config.max_disconnected_period) + ")");
        }
        break;
      case Kind::kIdle:
        idle.push_back(c);
        break;
      case Kind::kSpotRequested:
        spot_requests.push_back(c);
        [[fallthrough]];
      case Kind::kStarting:
        ++starting;
        break;
      case Kind::kBusy:
        break;
    }
  }
  const int live = static_cast<int>(input.instances.size());
  TerminateIdle(config, input, idle, live, &out);

  int desired = DesiredInstances(config, input.demand);
  // Zero-slot tasks run on any agent: a pool scaled to nothing needs one for them.
  if (desired == 0 && input.demand.pending_aux_tasks > 0 && live - out.size() == 0) desired = 1;
  // Spot requests the demand no longer needs are cancelled, newest first, keeping min_instances.
  // Each unlisted agent may be one of them fulfilled (the oldest the likeliest): so many count as
  // arrived, not starting, and are never cancelled.
  std::sort(spot_requests.begin(), spot_requests.end(),
            [](const Classified& a, const Classified& b) {
              return a.instance->launched_at > b.instance->launched_at;
            });
  const int arrived = std::min(UnlistedAgents(input), static_cast<int>(spot_requests.size()));
  starting -= arrived;
  spot_requests.resize(spot_requests.size() - arrived);
  for (const Classified& c : spot_requests) {
    if (starting <= desired || live - out.size() <= config.min_instances) break;
    out.Add(*c.instance, "spot request no longer needed");
    --starting;
  }
  std::string refused;
  TrimAboveMax(config, all, live, &out, &refused);

  ScaleDecision decision;
  decision.refused = std::move(refused);
  decision.instances = live - out.size();
  decision.starting = starting;
  decision.desired = desired;
  const int for_min = config.min_instances - decision.instances;
  const int for_demand = desired - starting;
  decision.launch = std::max(
      0, std::min(std::max(for_min, for_demand), config.max_instances - decision.instances));
  if (decision.launch > 0) {
    decision.launch_reason = for_demand >= for_min
                                 ? std::to_string(input.demand.pending_slots) +
                                       " pending slots need " + std::to_string(desired) +
                                       " instance(s); " + std::to_string(starting) + " starting"
                                 : "min_instances is " + std::to_string(config.min_instances) +
                                       "; " + std::to_string(decision.instances) + " live";
    if (decision.launch < std::max(for_min, for_demand)) {
      decision.launch_reason +=
          "; capped by max_instances (" + std::to_string(config.max_instances) + ")";
    }
  }
  decision.terminate = out.Take();
  return decision;
}

}  // namespace det::autoscaler
