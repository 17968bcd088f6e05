#pragma once

#include <map>
#include <string>
#include <vector>

#include "bus/catalog/autoscaler.h"
#include "bus/catalog/experiments.h"
#include "bus/catalog/jobs.h"
#include "bus/catalog/master.h"
#include "storage/cloud_repo.h"

namespace det::master {

// Bus counters read from the master's sockets (totals since the master started).
struct BusCounters {
  int64_t gateway_requests = 0;  // CLI gateway requests answered
  int64_t gateway_drops = 0;     // malformed ones
  int64_t events_forwarded = 0;  // event bus
  int64_t events_dropped = 0;
};

// What /metrics reports, as read at one moment.
struct MetricsSnapshot {
  std::vector<std::string> pools;
  std::vector<bus::AgentSummary> agents;
  std::vector<bus::JobSummary> jobs;
  std::vector<bus::ExperimentSummary> experiments;
  bus::RegistryStats registry;
  BusCounters bus;
  std::vector<bus::InstanceInfo> instances;                      // live ones
  std::map<std::string, storage::ScalingTotals> scaling_totals;  // per pool
};

// The snapshot in Prometheus' text exposition format (version 0.0.4): agents by pool and state,
// slots by pool and state (free, used, disabled), per-slot utilisation, jobs by pool and state,
// experiments by state, scheduling passes and their time, bus messages and drops, the
// autoscaler's instances by pool and state and its decisions, launches, terminations and errors.
std::string PrometheusText(const MetricsSnapshot& snapshot);

}  // namespace det::master
