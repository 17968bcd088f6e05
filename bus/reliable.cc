#include "bus/reliable.h"

namespace det::bus {

Outbox::Pending& Outbox::Add(std::string type, std::string body) {
  const uint64_t seq = next_seq_++;
  Pending& p = pending_[seq];
  p.seq = seq;
  p.type = std::move(type);
  p.body = std::move(body);
  return p;
}

void Outbox::MarkSent(uint64_t seq, MonoTime now) {
  if (auto it = pending_.find(seq); it != pending_.end()) it->second.last_sent = now;
}

void Outbox::Ack(uint64_t seq) { pending_.erase(seq); }

size_t Outbox::DropType(std::string_view type) {
  return std::erase_if(pending_, [&](const auto& entry) { return entry.second.type == type; });
}

std::vector<Outbox::Pending*> Outbox::Due(MonoTime now, Duration resend_after) {
  std::vector<Pending*> due;
  for (auto& [seq, p] : pending_) {
    if (p.last_sent == MonoTime{} || now - p.last_sent >= resend_after) due.push_back(&p);
  }
  return due;
}

std::vector<Outbox::Pending*> Outbox::All() {
  std::vector<Pending*> all;
  all.reserve(pending_.size());
  for (auto& [seq, p] : pending_) all.push_back(&p);
  return all;
}

bool DedupWindow::Accept(uint64_t epoch, uint64_t seq) {
  if (epoch != epoch_) {
    epoch_ = epoch;
    floor_ = 0;
    above_.clear();
  }
  if (seq <= floor_ || above_.contains(seq)) return false;
  above_.insert(seq);
  while (!above_.empty() && *above_.begin() == floor_ + 1) {
    floor_ = *above_.begin();
    above_.erase(above_.begin());
  }
  if (above_.size() > kMaxAboveFloor) {
    floor_ = *above_.begin();
    above_.erase(above_.begin());
  }
  return true;
}

}  // namespace det::bus
