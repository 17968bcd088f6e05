#pragma once

// At-least-once delivery made exactly-once at the receiver, for the agent channel.
//
// The sender numbers each reliable message (1, 2, 3, ... per sender epoch), keeps it in an Outbox
// until the receiver acknowledges that number, resends it if no ack came within a resend period,
// and replays every unacknowledged message after a reconnect. The receiver acknowledges every
// reliable message it gets, including duplicates, and delivers a number only the first time
// (DedupWindow). A new sender epoch (the peer restarted) starts a fresh window.

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"

namespace det::bus {

class Outbox {
 public:
  struct Pending {
    uint64_t seq = 0;
    std::string type;
    std::string body;
    MonoTime last_sent{};
  };

  // Assigns the next sequence number and retains the message. The caller sends it (or not, when
  // disconnected) and calls MarkSent.
  Pending& Add(std::string type, std::string body);
  void MarkSent(uint64_t seq, MonoTime now);
  // Drops an acknowledged message; unknown numbers are ignored (duplicate acks).
  void Ack(uint64_t seq);
  // Drops every retained message of `type`; returns how many.
  size_t DropType(std::string_view type);
  // Messages in sequence order whose last send is older than `resend_after` (or never sent).
  std::vector<Pending*> Due(MonoTime now, Duration resend_after);
  // Every retained message in sequence order, for replay after a reconnect.
  std::vector<Pending*> All();
  size_t size() const { return pending_.size(); }

 private:
  uint64_t next_seq_ = 1;
  std::map<uint64_t, Pending> pending_;
};

class DedupWindow {
 public:
  // True the first time (epoch, seq) is seen. A different epoch resets the window.
  bool Accept(uint64_t epoch, uint64_t seq);

 private:
  // Bounds memory if a sender skips numbers; past it the floor jumps forward.
  static constexpr size_t kMaxAboveFloor = 1 << 16;
  uint64_t epoch_ = 0;
  uint64_t floor_ = 0;  // every seq <= floor_ has been delivered
  std::set<uint64_t> above_;
};

}  // namespace det::bus
