#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace det {

using Duration = std::chrono::nanoseconds;
using MonoTime = std::chrono::steady_clock::time_point;
using WallTime = std::chrono::system_clock::time_point;

// Time, injected. Every timeout, heartbeat, idle period, pause between attempts and signature
// date goes through a Clock, so that tests drive time with SimulatedClock instead of sleeping.
// Nothing outside this file reads std::chrono's clocks. Implementations are thread-safe.
class Clock {
 public:
  virtual ~Clock() = default;
  // Monotonic time, for durations and deadlines.
  virtual MonoTime Now() const = 0;
  // Calendar time, for timestamps that leave the process (message headers, logs, signatures).
  virtual WallTime WallNow() const = 0;
  // Blocks the calling thread until Now() reaches `deadline` (returns at once if it has).
  virtual void SleepUntil(MonoTime deadline) const = 0;
  void SleepFor(Duration pause) const { SleepUntil(Now() + pause); }
};

// The process's real clocks.
class RealClock final : public Clock {
 public:
  MonoTime Now() const override { return std::chrono::steady_clock::now(); }
  WallTime WallNow() const override { return std::chrono::system_clock::now(); }
  void SleepUntil(MonoTime deadline) const override;
  // A process-wide instance, for code that is not handed a clock (real processes, sockets).
  static RealClock& Instance();
};

// A clock that moves only when told to; monotonic and wall time move together. Time moves in one
// of two ways, chosen at construction:
//   kWaitForAdvance    a test moves it (Advance); a thread in SleepUntil waits until the clock
//                      passes its deadline (AwaitSleepers tells the test the thread is asleep);
//   kSleepAdvances     a sleep moves the clock to its deadline itself: code under test that
//                      waits on one thread (a retry's backoff) costs no real time, and slept()
//                      says what it waited.
// Alarms, as Envoy's simulated time has them: a callback set for a time fires on the thread that
// moves the clock there, with Now() at the alarm's time, in time order (ties: in the order set),
// outside the clock's lock (it may read the clock and set alarms).
class SimulatedClock final : public Clock {
 public:
  enum class Sleeps { kWaitForAdvance, kSleepAdvances };
  using AlarmId = uint64_t;

  // Starts at an arbitrary fixed point: 2026-01-01T00:00:00Z on the wall clock.
  explicit SimulatedClock(Sleeps sleeps = Sleeps::kWaitForAdvance);
  MonoTime Now() const override;
  WallTime WallNow() const override;
  void SleepUntil(MonoTime deadline) const override;

  // Moves time forward by `d`, firing the alarms that fall due on the way.
  void Advance(Duration d) { MoveTo(Now() + d); }
  // Calls `fire` once time reaches `when`: on the thread that moves it there, or at once on this
  // one if it has.
  AlarmId SetAlarm(MonoTime when, std::function<void()> fire);
  // Whether the alarm was set and had not fired; it will not.
  bool CancelAlarm(AlarmId id);
  size_t pending_alarms() const;
  // Threads now in SleepUntil (kWaitForAdvance).
  size_t sleepers() const;
  // Blocks, up to `limit` of real time, until at least `count` threads sleep on this clock;
  // whether they do. A test waits for the code under test to be asleep before it advances.
  bool AwaitSleepers(size_t count, Duration limit) const;
  // The pauses that sleeps moved the clock by (kSleepAdvances), in order.
  std::vector<Duration> slept() const;

 private:
  // Time's state is mutable: a sleep, which callers make on a const Clock, moves a kSleepAdvances
  // clock. MoveTo fires the alarms due up to `target` and leaves the clock there; StepTowards
  // moves it towards `to`, stopping at the next alarm due, which it returns.
  void MoveTo(MonoTime target) const;
  std::function<void()> StepTowards(MonoTime to) const;

  const Sleeps sleeps_;
  mutable std::mutex mu_;
  mutable std::condition_variable moved_;  // time moved, or a thread began to sleep
  mutable MonoTime mono_;
  mutable WallTime wall_;
  mutable std::map<std::pair<MonoTime, AlarmId>, std::function<void()>> alarms_;
  AlarmId next_alarm_ = 1;
  mutable size_t sleepers_ = 0;
  mutable std::vector<Duration> slept_;
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
