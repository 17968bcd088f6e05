#include "agent/log_shipper.h"

#include <algorithm>

namespace det::agent {
namespace {

std::optional<int64_t> OldestOffset(const std::vector<bus::WorkloadLogLine>& lines,
                                    const std::string& stdtype) {
  for (const auto& line : lines) {
    if (line.stdtype == stdtype && line.offset >= 0) return line.offset;
  }
  return std::nullopt;
}

}  // namespace

LogShipper::LogShipper(std::string incarnation, Limits limits)
    : incarnation_(std::move(incarnation)), limits_(limits) {}

void LogShipper::Add(const std::string& allocation_id, const std::string& task_id,
                     bus::WorkloadLogLine line, MonoTime now) {
  Pending& pending = pending_[allocation_id];
  if (pending.lines.empty()) {
    pending.first_at = now;
    pending.task_id = task_id;
  }
  pending.bytes += line.text.size();
  pending.lines.push_back(std::move(line));
  // A backlog read at once (e.g. after an agent restart) still goes in bounded batches.
  if (pending.lines.size() >= limits_.max_lines || pending.bytes >= limits_.max_batch_bytes) {
    sealed_.push_back(Seal(allocation_id, pending, now));
  }
}

bus::WorkloadLogs LogShipper::Seal(const std::string& allocation_id, Pending& pending,
                                   MonoTime now) {
  bus::WorkloadLogs batch{allocation_id, pending.task_id, incarnation_, pending.next_batch++, {}};
  batch.lines.swap(pending.lines);
  pending.bytes = 0;
  unconfirmed_[{allocation_id, batch.batch}] = Sent{batch, now};
  return batch;
}

bool LogShipper::Full(const std::string& allocation_id) const {
  auto first = unconfirmed_.lower_bound({allocation_id, 0});
  size_t count = 0;
  for (auto it = first; it != unconfirmed_.end() && it->first.first == allocation_id; ++it) {
    if (++count >= limits_.window) return true;
  }
  return false;
}

std::vector<bus::WorkloadLogs> LogShipper::Overdue(MonoTime now, Duration after) {
  std::vector<bus::WorkloadLogs> overdue;
  for (auto& [key, sent] : unconfirmed_) {
    if (now - sent.sent_at < after) continue;
    sent.sent_at = now;
    overdue.push_back(sent.batch);
  }
  return overdue;
}

std::vector<bus::WorkloadLogs> LogShipper::TakeDue(MonoTime now) {
  std::vector<bus::WorkloadLogs> due = std::exchange(sealed_, {});
  for (auto& [allocation_id, pending] : pending_) {
    if (pending.lines.empty()) continue;
    if (now - pending.first_at >= limits_.max_delay) {
      due.push_back(Seal(allocation_id, pending, now));
    }
  }
  return due;
}

std::vector<bus::WorkloadLogs> LogShipper::TakeAll(const std::string& allocation_id, MonoTime now) {
  std::vector<bus::WorkloadLogs> all;
  for (auto it = sealed_.begin(); it != sealed_.end();) {  // sealed earlier, not yet taken
    if (it->allocation_id == allocation_id) {
      all.push_back(std::move(*it));
      it = sealed_.erase(it);
    } else {
      ++it;
    }
  }
  auto it = pending_.find(allocation_id);
  if (it != pending_.end() && !it->second.lines.empty())
    all.push_back(Seal(allocation_id, it->second, now));
  return all;
}

void LogShipper::Confirmed(const std::string& allocation_id, const std::string& incarnation,
                           uint64_t batch) {
  if (incarnation == incarnation_) unconfirmed_.erase({allocation_id, batch});
}

std::vector<bus::WorkloadLogs> LogShipper::Unconfirmed() const {
  std::vector<bus::WorkloadLogs> batches;
  for (const auto& [key, sent] : unconfirmed_) batches.push_back(sent.batch);
  return batches;
}

std::optional<int64_t> LogShipper::OldestUnconfirmedOffset(const std::string& allocation_id,
                                                           const std::string& stdtype) const {
  // Batches are sealed in offset order, so the first batch holding the stream has the oldest.
  for (auto it = unconfirmed_.lower_bound({allocation_id, 0});
       it != unconfirmed_.end() && it->first.first == allocation_id; ++it) {
    if (auto offset = OldestOffset(it->second.batch.lines, stdtype)) return offset;
  }
  if (auto it = pending_.find(allocation_id); it != pending_.end()) {
    return OldestOffset(it->second.lines, stdtype);
  }
  return std::nullopt;
}

void LogShipper::Forget(const std::string& allocation_id) {
  pending_.erase(allocation_id);
  std::erase_if(sealed_,
                [&](const bus::WorkloadLogs& b) { return b.allocation_id == allocation_id; });
  for (auto it = unconfirmed_.lower_bound({allocation_id, 0});
       it != unconfirmed_.end() && it->first.first == allocation_id;) {
    it = unconfirmed_.erase(it);
  }
}

MonoTime LogShipper::NextDue() const {
  if (!sealed_.empty()) return MonoTime{};  // due now
  MonoTime next = MonoTime::max();
  for (const auto& [allocation_id, pending] : pending_) {
    if (!pending.lines.empty()) next = std::min(next, pending.first_at + limits_.max_delay);
  }
  return next;
}

}  // namespace det::agent
