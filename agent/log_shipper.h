#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bus/catalog/workload.h"
#include "common/clock.h"

namespace det::agent {

// Collects workloads' output lines into numbered batches and keeps every batch until the master
// says it is committed.
//
// A batch is due when it holds `max_lines` lines or its first line is `max_delay` old. Batches are
// numbered per allocation from 1 and carry this agent process's incarnation; a batch the master
// has not confirmed is sent again when the master restarts (Unconfirmed()). Lines carry their
// offsets in the workload's output, so the runner can tell which output is safely stored
// (OldestUnconfirmedOffset) and a restarted agent re-reads only the rest.
//
// Threading: not thread-safe; owned by the agent's loop.
class LogShipper {
 public:
  explicit LogShipper(std::string incarnation, size_t max_lines = 1000,
                      Duration max_delay = std::chrono::milliseconds(50));

  void Add(const std::string& allocation_id, const std::string& task_id, bus::WorkloadLogLine line,
           MonoTime now);
  // Batches that are due; each is kept as unconfirmed.
  std::vector<bus::WorkloadLogs> TakeDue(MonoTime now);
  // Every pending line of one allocation, as batches (before its end is reported).
  std::vector<bus::WorkloadLogs> TakeAll(const std::string& allocation_id);
  // The master committed the batch; confirmations for another incarnation are ignored.
  void Confirmed(const std::string& allocation_id, const std::string& incarnation, uint64_t batch);
  std::vector<bus::WorkloadLogs> Unconfirmed() const;
  // The offset of the oldest line of `stdtype` not yet committed (pending or unconfirmed), if any.
  std::optional<int64_t> OldestUnconfirmedOffset(const std::string& allocation_id,
                                                 const std::string& stdtype) const;
  // Drops everything about the allocation.
  void Forget(const std::string& allocation_id);
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

  std::string incarnation_;
  size_t max_lines_;
  Duration max_delay_;
  std::map<std::string, Pending> pending_;  // by allocation
  std::map<std::pair<std::string, uint64_t>, bus::WorkloadLogs> unconfirmed_;
  std::vector<bus::WorkloadLogs> sealed_;  // full batches sealed by Add, not yet taken
};

}  // namespace det::agent
