#include "agent/log_shipper.h"

namespace det::agent {

LogShipper::LogShipper(size_t max_lines, Duration max_delay)
    : max_lines_(max_lines), max_delay_(max_delay) {}

void LogShipper::Add(const std::string& allocation_id, const std::string& task_id,
                     bus::WorkloadLogLine line, MonoTime now) {
  Pending& pending = pending_[allocation_id];
  if (pending.lines.empty()) {
    pending.first_at = now;
    pending.task_id = task_id;
  }
  pending.lines.push_back(std::move(line));
}

bus::WorkloadLogs LogShipper::Seal(const std::string& allocation_id, Pending& pending) {
  bus::WorkloadLogs batch{allocation_id, pending.task_id, pending.next_batch++, {}};
  batch.lines.swap(pending.lines);
  unconfirmed_[{allocation_id, batch.batch}] = batch;
  return batch;
}

std::vector<bus::WorkloadLogs> LogShipper::TakeDue(MonoTime now) {
  std::vector<bus::WorkloadLogs> due;
  for (auto& [allocation_id, pending] : pending_) {
    if (pending.lines.empty()) continue;
    if (pending.lines.size() >= max_lines_ || now - pending.first_at >= max_delay_) {
      due.push_back(Seal(allocation_id, pending));
    }
  }
  return due;
}

std::vector<bus::WorkloadLogs> LogShipper::TakeAll(const std::string& allocation_id) {
  std::vector<bus::WorkloadLogs> all;
  auto it = pending_.find(allocation_id);
  if (it == pending_.end()) return all;
  if (!it->second.lines.empty()) all.push_back(Seal(allocation_id, it->second));
  pending_.erase(it);  // the allocation has ended: nothing more will be added
  return all;
}

void LogShipper::Confirmed(const std::string& allocation_id, uint64_t batch) {
  unconfirmed_.erase({allocation_id, batch});
}

std::vector<bus::WorkloadLogs> LogShipper::Unconfirmed() const {
  std::vector<bus::WorkloadLogs> batches;
  for (const auto& [key, batch] : unconfirmed_) batches.push_back(batch);
  return batches;
}

MonoTime LogShipper::NextDue() const {
  MonoTime next = MonoTime::max();
  for (const auto& [allocation_id, pending] : pending_) {
    if (!pending.lines.empty()) next = std::min(next, pending.first_at + max_delay_);
  }
  return next;
}

}  // namespace det::agent
