#pragma once

#include <random>

#include "common/clock.h"
#include "common/random_seed.h"

namespace det::bus {

// Reconnect delays: exponential growth from `initial` up to `max`, each delay shortened by a random
// fraction of up to `jitter` so that many clients restarted together do not retry in lockstep.
struct BackoffPolicy {
  Duration initial = std::chrono::seconds(1);
  Duration max = std::chrono::seconds(30);
  double multiplier = 2.0;
  double jitter = 0.5;  // 0: no jitter; 0.5: each delay in [base/2, base]
};

class Backoff {
 public:
  explicit Backoff(BackoffPolicy policy, uint64_t seed = RandomSeed());
  // The delay before the next attempt; grows with each call until Reset().
  Duration Next();
  void Reset() { attempts_ = 0; }
  int attempts() const { return attempts_; }

 private:
  BackoffPolicy policy_;
  std::mt19937_64 rng_;
  int attempts_ = 0;
};

}  // namespace det::bus
