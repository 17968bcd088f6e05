#include "autoscaler/launch_gate.h"

#include <algorithm>

namespace det::autoscaler {
namespace {

constexpr Duration kMaxBackoff = std::chrono::minutes(10);
constexpr Duration kThrottleBackoff = std::chrono::seconds(5);
constexpr Duration kPersonNeeded = std::chrono::minutes(1);

}  // namespace

LaunchGate::LaunchGate(const ProviderConfig& config)
    : config_(config), tokens_(config.max_launches_per_minute) {}

void LaunchGate::Refill(MonoTime now) {
  if (refilled_at_) {
    const double minutes = std::chrono::duration<double>(now - *refilled_at_).count() / 60.0;
    tokens_ = std::min<double>(config_.max_launches_per_minute,
                               tokens_ + minutes * config_.max_launches_per_minute);
  }
  refilled_at_ = now;
}

LaunchGate::Permit LaunchGate::Ask(int wanted, const std::vector<Offering>& offerings,
                                   MonoTime now) {
  Refill(now);
  Permit permit;
  if (wanted <= 0) return permit;
  if (now < paused_until_) {
    permit.refusal = pause_reason_;
    return permit;
  }
  if (breaker_open_) {
    if (now < breaker_retry_at_) {
      permit.refusal = "circuit breaker open: " + std::to_string(never_connected_in_a_row_) +
                       " launched instances in a row never connected; check startup_script, "
                       "the agent's config and the network to the master";
      return permit;
    }
    wanted = 1;  // half-open: one probe
  }
  auto usable = std::find_if(offerings.begin(), offerings.end(), [&](const Offering& o) {
    auto it = backoff_.find(o.Key());
    return it == backoff_.end() || now >= it->second.until;
  });
  if (usable == offerings.end()) {
    permit.refusal = "every offering is backed off after capacity or quota errors";
    return permit;
  }
  permit.count = std::min<int>(wanted, static_cast<int>(tokens_));
  if (permit.count == 0) {
    permit.refusal = "launch rate limit (max_launches_per_minute " +
                     std::to_string(config_.max_launches_per_minute) + ")";
    return permit;
  }
  tokens_ -= permit.count;
  permit.offering = *usable;
  // The probe gets its own starting period; whatever becomes of it (it connects, is an orphan,
  // fails to launch, is cancelled or vanishes), the next probe waits until then.
  if (breaker_open_) breaker_retry_at_ = now + config_.max_agent_starting_period;
  return permit;
}

void LaunchGate::Record(const Offering& offering, const LaunchResult& result, MonoTime now) {
  if (!result.error) {
    failures_in_a_row_ = 0;
    backoff_.erase(offering.Key());
    return;
  }
  const ProviderError& error = *result.error;
  switch (error.kind) {
    case ProviderErrorKind::kCapacity:
    case ProviderErrorKind::kQuota: {
      Backoff& backoff = backoff_[offering.Key()];
      backoff.until = now + backoff.next;
      backoff.next = std::min<Duration>(backoff.next * 2, kMaxBackoff);
      break;
    }
    case ProviderErrorKind::kThrottled:
      paused_until_ = std::max(paused_until_, now + kThrottleBackoff);
      pause_reason_ = "throttled by the provider: " + error.message;
      break;
    case ProviderErrorKind::kAuth:
    case ProviderErrorKind::kInvalid:
      paused_until_ = now + std::max(config_.launch_error_timeout, kPersonNeeded);
      pause_reason_ = std::string(ProviderErrorKindName(error.kind)) + " error: " + error.message;
      break;
    case ProviderErrorKind::kTransient:
      break;
  }
  // Capacity and quota errors are the offering's (backed off above, others are tried): they do
  // not pause the pool.
  const bool offering_error =
      error.kind == ProviderErrorKind::kCapacity || error.kind == ProviderErrorKind::kQuota;
  if (result.launched.empty() && !offering_error &&
      ++failures_in_a_row_ > config_.launch_error_retries &&
      config_.launch_error_timeout > Duration::zero()) {
    paused_until_ = std::max(paused_until_, now + config_.launch_error_timeout);
    pause_reason_ = std::to_string(failures_in_a_row_) +
                    " launch calls in a row failed (launch_error_retries " +
                    std::to_string(config_.launch_error_retries) + "); last: " + error.message;
  }
}

void LaunchGate::NeverConnected(MonoTime now) {
  ++never_connected_in_a_row_;
  if (config_.circuit_breaker_threshold > 0 && !breaker_open_ &&
      never_connected_in_a_row_ >= config_.circuit_breaker_threshold) {
    breaker_open_ = true;
    breaker_retry_at_ = now + config_.max_agent_starting_period;
  }
}

void LaunchGate::Connected() {
  never_connected_in_a_row_ = 0;
  breaker_open_ = false;
}

}  // namespace det::autoscaler
