#pragma once

// The scale decider: a pure function of (demand, agents, instances, the pool's limits, now) ->
// (how many instances to launch, which to terminate, and why). No I/O and no clock of its own, so
// every rule is a table test.
//
// Determined's rules are the floor:
//   - launch = clamp(min - instances, desired - starting, max - instances), where desired is the
//     instances the pending slots need and starting counts launched instances (and pending spot
//     requests) whose agents have not connected yet;
//   - terminate stopped instances, instances whose agent left more than max_disconnected_period
//     ago, and instances idle longer than max_idle_agent_period while above min_instances;
//   - above max_instances, trim pending spot requests, then idle, then disconnected instances;
//     never instances whose agents run work (the decision names them instead).
// Beyond Determined: idle instances that pending work could use are kept; spot requests that
// demand no longer needs are cancelled; instances that never connected within
// max_agent_starting_period (orphans) are terminated.

#include <map>
#include <string>
#include <vector>

#include "autoscaler/contract.h"

namespace det::autoscaler {

// A pool's agent as the master reports it.
struct AgentView {
  bool connected = false;           // false: lost, within the master's reconnect window
  bool idle = false;                // connected with no slot or aux task in use
  WallTime idle_since{};            // when idle
  std::optional<WallTime> lost_at;  // when the autoscaler saw it lose its connection
};

// What waits in the pool (the master's `cluster.pending`).
struct PoolDemand {
  int32_t pending_slots = 0;
  int32_t pending_tasks = 0;
  int32_t pending_aux_tasks = 0;
};

struct DeciderInput {
  WallTime now{};
  std::vector<Instance> instances;          // the provider's list, terminated ones left out
  std::map<std::string, AgentView> agents;  // by agent id (= instance id for ours)
  // Instances whose agent the autoscaler saw connected and then vanish, and when it left. An
  // instance past its starting period with neither an agent nor an entry here never connected.
  std::map<std::string, WallTime> disconnected_since;
  PoolDemand demand;
};

struct TerminateOrder {
  std::string id;
  std::string reason;
  bool never_connected = false;  // an orphan: feeds the launch circuit breaker
  bool operator==(const TerminateOrder&) const = default;
};

struct ScaleDecision {
  int launch = 0;
  std::string launch_reason;  // empty when launch == 0
  std::vector<TerminateOrder> terminate;
  // What the rules asked for and was not done because it would stop running work ("" if none).
  std::string refused;
  // How the instances were counted, for the decision record.
  int instances = 0;
  int starting = 0;
  int desired = 0;
  bool empty() const { return launch == 0 && terminate.empty(); }
};

ScaleDecision DecideScale(const ProviderConfig& config, const DeciderInput& input);

// Instances the pending slots need (ceil(pending_slots / slots_per_instance)); a pool whose
// instances have no slots needs one instance while zero-slot tasks wait.
int DesiredInstances(const ProviderConfig& config, const PoolDemand& demand);

}  // namespace det::autoscaler
