#pragma once

// A seed for a pseudo-random generator, from the kernel (getrandom). std::random_device costs
// CPUID probes first, which trap to the hypervisor on a VM: a few hundred microseconds of each
// short-lived det call.

#include <sys/random.h>

#include <cstdint>

#include "common/clock.h"

namespace det {

inline uint64_t RandomSeed() {
  uint64_t seed = 0;
  if (getrandom(&seed, sizeof seed, GRND_NONBLOCK) == static_cast<ssize_t>(sizeof seed)) {
    return seed;
  }
  // Only before the kernel's pool is ready (early boot): unique enough for ids and jitter.
  return static_cast<uint64_t>(RealClock::Instance().Now().time_since_epoch().count()) ^
         reinterpret_cast<uintptr_t>(&seed);
}

}  // namespace det
