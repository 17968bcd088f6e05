#pragma once

// `det-autoscaler simulate`: replays a workload trace against the real scale decider and pool
// scalers (the same PoolScaler the process runs), a simulated cloud and a simple scheduler, on a
// simulated clock, and reports what the configuration would cost and how long work would wait.
//
// Trace (CSV, one job per line, `#` comments, a header line allowed):
//   arrival_s,duration_s,slots[,pool]
// arrival_s: seconds from the start; duration_s: run time once placed; slots: slots it needs on
// one instance (at most the pool's instance_slots); pool: a pool with a provider (default: the
// first such pool in the config).
//
// The simulated cloud: each launch boots in boot_time ± boot_jitter (uniform); a spot launch
// fails with a capacity error with probability capacity_error_rate; a spot instance is
// interrupted after an exponentially distributed time (spot_interruptions_per_hour), and the work
// on it starts over. Instances cost price_per_hour (spot: spot_price_per_hour) from launch to
// termination. The scheduler places waiting jobs first come, first served on the first connected
// instance with room (single-instance jobs only).

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "autoscaler/contract.h"
#include "common/clock.h"
#include "common/status.h"

namespace det::autoscaler {

struct TraceJob {
  double arrival_s = 0;
  double duration_s = 0;
  int32_t slots = 1;
  std::string pool;  // "": the default pool
};

// Reads a trace file; errors name the line and the field.
Result<std::vector<TraceJob>> LoadTrace(const std::string& path);

struct SimulatedPool {
  std::string name;
  ProviderConfig provider;
  bool spot = false;  // `spot: true` in the provider section (aws)
};

// The pools with a provider in a master.yaml's `resource_pools`.
Result<std::vector<SimulatedPool>> LoadSimulatedPools(const std::string& master_yaml,
                                                      const std::vector<SectionType>& sections);

struct CloudModel {
  Duration boot_time = std::chrono::seconds(60);
  Duration boot_jitter = std::chrono::seconds(30);
  double capacity_error_rate = 0.0;  // per spot launch call
  double spot_interruptions_per_hour = 0.0;
  double price_per_hour = 3.06;  // p3.2xlarge on-demand, us-east-1
  double spot_price_per_hour = 0.92;
  uint64_t seed = 1;
};

struct SimulationReport {
  double cost = 0;
  double instance_hours = 0;
  double idle_instance_hours = 0;  // connected, nothing running
  double queue_p50_s = 0;          // arrival -> first start
  double queue_p99_s = 0;
  int jobs = 0;
  int finished = 0;
  int launches = 0;  // instances launched
  int capacity_errors = 0;
  int interruptions = 0;
  double simulated_hours = 0;
  double wall_seconds = 0;
};

// Runs the trace to completion (or `horizon` after the last arrival) with `pools`.
Result<SimulationReport> Simulate(const std::vector<TraceJob>& trace,
                                  const std::vector<SimulatedPool>& pools, const CloudModel& cloud,
                                  Duration horizon = std::chrono::hours(24 * 30));

// The reports side by side, one column per (name, report): cost, instance-hours, idle hours,
// queueing delay p50/p99, jobs finished, launches, errors, interruptions, simulation speed.
std::string FormatReports(const std::vector<std::pair<std::string, SimulationReport>>& runs);

// `det-autoscaler simulate`: loads the trace and the configs, simulates each, prints the table
// (stdout) or the error (stderr); returns the exit status.
struct SimulateCommand {
  std::string trace;
  std::string config;
  std::string compare;  // optional
  CloudModel cloud;
  std::vector<SectionType> sections;  // the provider types whose sections it reads
};
int RunSimulateCommand(const SimulateCommand& command);

}  // namespace det::autoscaler
