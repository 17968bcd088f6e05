#include "bus/backoff.h"

#include <algorithm>
#include <cmath>

namespace det::bus {

Backoff::Backoff(BackoffPolicy policy, uint64_t seed) : policy_(policy), rng_(seed) {}

Duration Backoff::Next() {
  const double base = static_cast<double>(policy_.initial.count()) *
                      std::pow(policy_.multiplier, std::min(attempts_, 62));
  const double capped = std::min(base, static_cast<double>(policy_.max.count()));
  ++attempts_;
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const double delay = capped * (1.0 - policy_.jitter * unit(rng_));
  return Duration(static_cast<int64_t>(delay));
}

}  // namespace det::bus
