#include "common/retry.h"

#include <algorithm>
#include <random>

#include "common/random_seed.h"

namespace det {

Duration BackoffDelay(const RetryPolicy& policy, int attempt) {
  static thread_local std::mt19937_64 random{RandomSeed()};
  const double ceiling =
      std::min<double>(static_cast<double>(policy.max_delay.count()),
                       static_cast<double>(policy.base_delay.count()) *
                           static_cast<double>(1LL << std::clamp(attempt, 0, 30)));
  std::uniform_real_distribution<double> jitter(0.0, ceiling);
  return Duration(static_cast<Duration::rep>(jitter(random)));
}

}  // namespace det
