#pragma once

// Retries of cloud API calls: capped exponential backoff with full jitter (AWS's "Exponential
// Backoff And Jitter"; the AWS SDKs' standard mode and Google's client libraries back off this
// way), so that many clients throttled at once do not come back in step.

#include "common/clock.h"

namespace det {

struct RetryPolicy {
  int max_attempts = 3;  // the first call included
  Duration base_delay = std::chrono::milliseconds(100);
  Duration max_delay = std::chrono::seconds(20);
};

// How long to wait before retry number `attempt` + 1 (attempt 0: after the first call failed):
// uniform in [0, min(max_delay, base_delay * 2^attempt)).
Duration BackoffDelay(const RetryPolicy& policy, int attempt);

// Calls `attempt` (returning true when done) every `pause` of `clock`'s time until it is done or
// `limit` has passed since the first call; returns whether it was done. For waits on a local
// resource (a port still held); calls to shared services back off with BackoffDelay instead.
template <typename Attempt>
bool RetryEvery(std::chrono::milliseconds pause, Duration limit, const Clock& clock,
                Attempt attempt) {
  const MonoTime give_up = clock.Now() + limit;
  while (!attempt()) {
    if (clock.Now() >= give_up) return false;
    clock.SleepFor(pause);
  }
  return true;
}

}  // namespace det
