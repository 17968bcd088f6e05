#include "common/clock.h"

namespace det {

RealClock& RealClock::Instance() {
  static RealClock clock;
  return clock;
}

SimulatedClock::SimulatedClock()
    : mono_(MonoTime(std::chrono::hours(1))), wall_(WallTime(std::chrono::seconds(1767225600))) {}

MonoTime SimulatedClock::Now() const {
  std::lock_guard lock(mu_);
  return mono_;
}

WallTime SimulatedClock::WallNow() const {
  std::lock_guard lock(mu_);
  return wall_;
}

void SimulatedClock::Advance(Duration d) {
  std::lock_guard lock(mu_);
  mono_ += d;
  wall_ += std::chrono::duration_cast<WallTime::duration>(d);
}

}  // namespace det
