#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "autoscaler/contract.h"

namespace det::autoscaler {

// Decides whether, how many and on which offering the decider's launches may go out now:
//   - a rate limit (max_launches_per_minute, a token bucket);
//   - per-offering backoff on capacity and quota errors (30 s doubling to 10 min), so the next
//     offering in the provider's order (another zone, or on-demand after spot with
//     `spot_fallback: on_demand`) is used meanwhile;
//   - throttling backs every offering off briefly; auth and invalid errors, and more than
//     `launch_error_retries` failed calls in a row (capacity and quota errors aside: those are the
//     offering's), pause the pool for `launch_error_timeout` (at least a minute for auth and
//     invalid: they need a person);
//   - a circuit breaker: after `circuit_breaker_threshold` launched instances in a row never
//     connected, launching stops; one instance is tried again every max_agent_starting_period
//     (whatever became of the last), and the first agent that connects closes the breaker.
// Pure state, time passed in. Not thread-safe.
class LaunchGate {
 public:
  explicit LaunchGate(const ProviderConfig& config);

  struct Permit {
    int count = 0;  // 0: none now, `refusal` says why
    Offering offering;
    std::string refusal;
  };
  Permit Ask(int wanted, const std::vector<Offering>& offerings, MonoTime now);
  // The outcome of a launch call the permit allowed.
  void Record(const Offering& offering, const LaunchResult& result, MonoTime now);
  // An instance was terminated because its agent never connected.
  void NeverConnected(MonoTime now);
  // An instance's agent connected.
  void Connected();

  bool breaker_open() const { return breaker_open_; }

 private:
  struct Backoff {
    MonoTime until{};
    Duration next = std::chrono::seconds(30);
  };
  void Refill(MonoTime now);

  const ProviderConfig config_;
  double tokens_;
  std::optional<MonoTime> refilled_at_;
  std::map<std::string, Backoff> backoff_;  // by Offering::Key()
  MonoTime paused_until_{};
  std::string pause_reason_;
  int failures_in_a_row_ = 0;
  int never_connected_in_a_row_ = 0;
  bool breaker_open_ = false;
  MonoTime breaker_retry_at_{};  // open: when the next probe may go
};

}  // namespace det::autoscaler
