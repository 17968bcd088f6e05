// SimulatedClock: alarms fire in time order as time advances, sleepers wake when it passes their
// deadline, and a kSleepAdvances clock's sleeps move it; RetryEvery waits on the clock it is given.
#include "common/clock.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "common/retry.h"

namespace det {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(SimulatedClockTest, AlarmsFireInTimeOrderEachSeeingItsOwnTime) {
  SimulatedClock clock;
  const MonoTime start = clock.Now();
  std::vector<std::string> fired;
  clock.SetAlarm(start + seconds(3), [&] {
    fired.push_back("3s at " + std::to_string((clock.Now() - start) / milliseconds(1)));
  });
  clock.SetAlarm(start + seconds(1), [&] {
    fired.push_back("1s at " + std::to_string((clock.Now() - start) / milliseconds(1)));
  });
  clock.SetAlarm(start + seconds(1), [&] { fired.push_back("1s, set second"); });
  clock.Advance(milliseconds(999));
  EXPECT_TRUE(fired.empty());
  clock.Advance(seconds(5));
  EXPECT_EQ(fired, (std::vector<std::string>{"1s at 1000", "1s, set second", "3s at 3000"}));
  EXPECT_EQ(clock.Now() - start, milliseconds(5999));
  EXPECT_EQ(clock.pending_alarms(), 0u);
}

TEST(SimulatedClockTest, AnAlarmSetByAnAlarmWithinTheAdvanceFiresInIt) {
  SimulatedClock clock;
  const MonoTime start = clock.Now();
  int ticks = 0;
  std::function<void()> tick = [&] {
    ++ticks;
    clock.SetAlarm(clock.Now() + seconds(1), tick);  // a periodic timer re-arms itself
  };
  clock.SetAlarm(start + seconds(1), tick);
  clock.Advance(milliseconds(4500));
  EXPECT_EQ(ticks, 4);
  EXPECT_EQ(clock.pending_alarms(), 1u);
}

TEST(SimulatedClockTest, ACancelledAlarmDoesNotFireAndADueOneFiresAtOnce) {
  SimulatedClock clock;
  bool cancelled_fired = false, due_fired = false;
  const auto id = clock.SetAlarm(clock.Now() + seconds(1), [&] { cancelled_fired = true; });
  EXPECT_TRUE(clock.CancelAlarm(id));
  EXPECT_FALSE(clock.CancelAlarm(id));
  clock.Advance(seconds(2));
  EXPECT_FALSE(cancelled_fired);
  clock.SetAlarm(clock.Now(), [&] { due_fired = true; });
  EXPECT_TRUE(due_fired);
}

TEST(SimulatedClockTest, ASleeperWakesOnlyWhenTimePassesItsDeadline) {
  SimulatedClock clock;
  const MonoTime deadline = clock.Now() + seconds(10);
  std::atomic<bool> woke{false};
  std::thread sleeper([&] {
    clock.SleepUntil(deadline);
    woke = true;
  });
  ASSERT_TRUE(clock.AwaitSleepers(1, seconds(10)));
  clock.Advance(seconds(9));
  EXPECT_FALSE(woke.load());
  EXPECT_EQ(clock.sleepers(), 1u);
  clock.Advance(seconds(1));
  sleeper.join();
  EXPECT_TRUE(woke.load());
  EXPECT_EQ(clock.sleepers(), 0u);
}

TEST(SimulatedClockTest, ASleepOnASleepAdvancesClockMovesItAndFiresAlarmsOnTheWay) {
  SimulatedClock clock(SimulatedClock::Sleeps::kSleepAdvances);
  const MonoTime start = clock.Now();
  const WallTime wall_start = clock.WallNow();
  bool fired = false;
  clock.SetAlarm(start + seconds(2), [&] { fired = true; });
  clock.SleepFor(seconds(3));
  clock.SleepFor(milliseconds(250));
  EXPECT_TRUE(fired);
  EXPECT_EQ(clock.Now() - start, milliseconds(3250));
  EXPECT_EQ(clock.WallNow() - wall_start, milliseconds(3250));
  EXPECT_EQ(clock.slept(), (std::vector<Duration>{seconds(3), milliseconds(250)}));
}

TEST(RetryEveryTest, PausesOnTheClockItIsGivenUntilTheAttemptSucceedsOrTheLimitPasses) {
  SimulatedClock clock(SimulatedClock::Sleeps::kSleepAdvances);
  int calls = 0;
  EXPECT_TRUE(RetryEvery(milliseconds(200), seconds(5), clock, [&] { return ++calls == 4; }));
  EXPECT_EQ(calls, 4);
  EXPECT_EQ(clock.slept().size(), 3u);
  calls = 0;
  EXPECT_FALSE(RetryEvery(milliseconds(200), seconds(1), clock, [&] { return ++calls < 0; }));
  EXPECT_EQ(calls, 6);  // at 0, 200, ..., 1000 ms: the last attempt at the limit
}

}  // namespace
}  // namespace det
