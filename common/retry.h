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

}  // namespace det
