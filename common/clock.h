#pragma once

#include <chrono>
#include <mutex>

namespace det {

using Duration = std::chrono::nanoseconds;
using MonoTime = std::chrono::steady_clock::time_point;
using WallTime = std::chrono::system_clock::time_point;

// Time, injected. Every timeout, heartbeat, idle period and signature date reads a Clock so that
// tests can drive time with SimulatedClock instead of sleeping. Implementations are thread-safe.
class Clock {
 public:
  virtual ~Clock() = default;
  // Monotonic time, for durations and deadlines.
  virtual MonoTime Now() const = 0;
  // Calendar time, for timestamps that leave the process (message headers, logs, signatures).
  virtual WallTime WallNow() const = 0;
};

// The process's real clocks.
class RealClock final : public Clock {
 public:
  MonoTime Now() const override { return std::chrono::steady_clock::now(); }
  WallTime WallNow() const override { return std::chrono::system_clock::now(); }
  // A process-wide instance, for code that is not handed a clock.
  static RealClock& Instance();
};

// A clock that moves only when told to. Monotonic and wall time advance together.
class SimulatedClock final : public Clock {
 public:
  // Starts at an arbitrary fixed point: 2026-01-01T00:00:00Z on the wall clock.
  SimulatedClock();
  MonoTime Now() const override;
  WallTime WallNow() const override;
  void Advance(Duration d);

 private:
  mutable std::mutex mu_;
  MonoTime mono_;
  WallTime wall_;
};

// Nanoseconds since the Unix epoch, the form timestamps take on the wire.
inline int64_t UnixNanos(WallTime t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

}  // namespace det
