#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bus/catalog/master.h"
#include "bus/catalog/tasks.h"
#include "master/cluster/resource_config.h"
#include "master/front/actor_calls.h"
#include "master/front/log_buffer.h"
#include "master/front/prometheus.h"
#include "master/front/record_reads.h"
#include "master/records/log_retention.h"

namespace det::master {

// What the master answers about itself: its resource pools with their agents' slots, its recent
// log lines and log retention now (admins), and /metrics in Prometheus' text format, which
// gathers the actors' lists (through `calls`), the autoscaler's records (through `reads`) and the
// bus's counters.
//
// Thread-safe once set up: the setters run before any server starts; then any thread may call.
class MasterCalls {
 public:
  // `calls`, `reads` and `database` outlive these calls.
  MasterCalls(ActorCalls& calls, RecordReads& reads, storage::Database& database,
              const ResourcesConfig& resources);

  // The configured pools with their connected agents' slots.
  Result<bus::ResourcePoolList> ResourcePools(const auth::Principal& caller);
  // Admins: log retention now.
  Result<bus::TaskCleanupLogsReply> CleanupLogs(const auth::Principal& caller);
  // The master's recent log lines (admins).
  Result<bus::MasterLogsReply> MasterLogs(const auth::Principal& caller,
                                          const bus::MasterLogsRequest& request);
  // /metrics: the cluster in Prometheus' text format (prometheus.h).
  Result<std::string> Metrics(const auth::Principal& caller);

  // Where /metrics reads the bus's counters; set by the master once its sockets exist.
  void SetBusCounters(std::function<BusCounters()> read) { bus_counters_ = std::move(read); }
  // Where master.logs reads the master's recent log lines (unset: there are none to read).
  void SetLogBuffer(std::shared_ptr<LogBuffer> logs) { logs_ = std::move(logs); }
  // The master's log retention, which outlives these calls (unset: cleanup is Unavailable).
  void SetLogRetention(LogRetention* retention) { retention_ = retention; }

 private:
  ActorCalls& calls_;
  RecordReads& reads_;
  storage::Database& database_;
  std::vector<bus::ResourcePoolSummary> pools_;  // as configured; counts filled per call
  std::function<BusCounters()> bus_counters_;
  std::shared_ptr<LogBuffer> logs_;
  LogRetention* retention_ = nullptr;
};

}  // namespace det::master
