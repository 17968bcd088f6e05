#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

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

// `unix_ns` as RFC 3339 in UTC with `fraction_digits` (0 to 9) digits of the second:
// "2026-11-24T01:02:03.000000001Z" with nine, as the Docker engine stamps log lines.
std::string Rfc3339Utc(int64_t unix_ns, int fraction_digits);
// "2026-11-24T01:02:03Z" or with a fraction of up to nine digits, in UTC ("Z") only: nanoseconds
// since the Unix epoch; nullopt for anything else.
std::optional<int64_t> ParseRfc3339Utc(const std::string& text);

}  // namespace det
