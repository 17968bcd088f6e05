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
// A batch is due when it holds `limits.max_lines` lines or `limits.max_batch_bytes` of text, or
// its first line is `limits.max_delay` old. Memory is bounded: an allocation with
// `limits.window` batches unconfirmed is Full(), and its reader stops reading (the workload's
// output file on disk holds the rest) until the master confirms one. Batches are
// numbered per allocation from 1 and carry this agent process's incarnation; a batch the master
// has not confirmed is sent again when the master restarts (Unconfirmed()). Lines carry their
// offsets in the workload's output, so the runner can tell which output is safely stored
// (OldestUnconfirmedOffset) and a restarted agent re-reads only the rest.
//
// Threading: not thread-safe; owned by the agent's loop.
// How large a batch grows and how many an allocation may have unconfirmed (LogShipper).
struct LogShipperLimits {
  size_t max_lines = 1000;
  size_t max_batch_bytes = 1 << 20;
  Duration max_delay = std::chrono::milliseconds(50);
  size_t window = 8;  // unconfirmed batches per allocation
};

class LogShipper {
 public:
  using Limits = LogShipperLimits;
  explicit LogShipper(std::string incarnation, Limits limits = {});

  void Add(const std::string& allocation_id, const std::string& task_id, bus::WorkloadLogLine line,
           MonoTime now);
  // Batches that are due; each is kept as unconfirmed.
  std::vector<bus::WorkloadLogs> TakeDue(MonoTime now);
  // Every pending line of one allocation, as batches (before its end is reported).
  std::vector<bus::WorkloadLogs> TakeAll(const std::string& allocation_id, MonoTime now);
  // The master committed the batch; confirmations for another incarnation are ignored.
  void Confirmed(const std::string& allocation_id, const std::string& incarnation, uint64_t batch);
  std::vector<bus::WorkloadLogs> Unconfirmed() const;
  // Unconfirmed batches sealed at least `after` before `now` and not resent since; each counts as
  // resent now. (A batch the master could not store is confirmed only when sent again.)
  std::vector<bus::WorkloadLogs> Overdue(MonoTime now, Duration after);
  // The allocation's window is full: read no more of its output until a batch is confirmed.
  bool Full(const std::string& allocation_id) const;
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
    size_t bytes = 0;
    MonoTime first_at;
    uint64_t next_batch = 1;
  };
  struct Sent {
    bus::WorkloadLogs batch;
    MonoTime sent_at;
  };
  bus::WorkloadLogs Seal(const std::string& allocation_id, Pending& pending, MonoTime now);

  std::string incarnation_;
  Limits limits_;
  std::map<std::string, Pending> pending_;  // by allocation
  std::map<std::pair<std::string, uint64_t>, Sent> unconfirmed_;
  std::vector<bus::WorkloadLogs> sealed_;  // full batches sealed by Add, not yet taken
};

}  // namespace det::agent
