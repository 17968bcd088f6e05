#pragma once

#include <atomic>
#include <string>
#include <string_view>
#include <unordered_map>

#include "common/clock.h"
#include "common/status.h"

namespace det::bus {

// Counts and logs input that a bus endpoint had to drop (malformed frames, unknown types, bad
// fields, refused peers). Logging is rate-limited per sender so a flood cannot fill the disk: the
// first drop from a sender is logged at once, later ones at most once per `interval`, with the
// number suppressed in between. Record() is for the owning actor's thread only; total() may be read
// from any thread.
class DropLog {
 public:
  DropLog(std::string endpoint_name, const Clock& clock,
          Duration interval = std::chrono::seconds(10));

  void Record(std::string_view sender, const Status& why);
  uint64_t total() const { return total_.load(std::memory_order_relaxed); }
  // Log lines written (the rest were suppressed by the rate limit).
  uint64_t logged() const { return logged_; }

 private:
  struct SenderState {
    MonoTime last_logged;
    uint64_t suppressed = 0;
  };
  // Bounds memory when a flood comes from ever-new identities.
  static constexpr size_t kMaxTrackedSenders = 4096;

  std::string endpoint_name_;
  const Clock& clock_;
  Duration interval_;
  std::unordered_map<std::string, SenderState> senders_;
  std::atomic<uint64_t> total_{0};
  uint64_t logged_ = 0;
};

}  // namespace det::bus
