#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "bus/catalog/workload.h"
#include "common/clock.h"

namespace det::agent {

// Collects workloads' output lines into numbered batches and keeps every batch until the master
// says it is committed.
//
// A batch is due when it holds `max_lines` lines or its first line is `max_delay` old. Batches are
// numbered per allocation from 1; a batch the master has not confirmed is sent again when the
// master restarts (Unconfirmed()); the master stores each (allocation, batch) once.
//
// Threading: not thread-safe; owned by the agent's loop.
class LogShipper {
 public:
  explicit LogShipper(size_t max_lines = 1000, Duration max_delay = std::chrono::milliseconds(50));

  void Add(const std::string& allocation_id, const std::string& task_id, bus::WorkloadLogLine line,
           MonoTime now);
  // Batches that are due; each is kept as unconfirmed.
  std::vector<bus::WorkloadLogs> TakeDue(MonoTime now);
  // Every pending line of one allocation, as batches (before its end is reported).
  std::vector<bus::WorkloadLogs> TakeAll(const std::string& allocation_id);
  void Confirmed(const std::string& allocation_id, uint64_t batch);
  std::vector<bus::WorkloadLogs> Unconfirmed() const;
  // When the oldest pending line becomes due; MonoTime::max() when nothing is pending.
  MonoTime NextDue() const;
  size_t unconfirmed() const { return unconfirmed_.size(); }

 private:
  struct Pending {
    std::string task_id;
    std::vector<bus::WorkloadLogLine> lines;
    MonoTime first_at;
    uint64_t next_batch = 1;
  };
  bus::WorkloadLogs Seal(const std::string& allocation_id, Pending& pending);

  size_t max_lines_;
  Duration max_delay_;
  std::map<std::string, Pending> pending_;  // by allocation
  std::map<std::pair<std::string, uint64_t>, bus::WorkloadLogs> unconfirmed_;
};

}  // namespace det::agent
