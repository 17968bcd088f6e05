#include "autoscaler/scale_decider.h"

#include <gtest/gtest.h>

#include <limits>

namespace det::autoscaler {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;

const WallTime kNow = WallTime{} + std::chrono::hours(1000);

// One instance of the table: what it is and what its agent does.
struct Inst {
  std::string id;
  enum Agent { kNone, kIdle, kBusy, kLost } agent = kNone;
  Duration age = minutes(30);      // since launch
  Duration idle_for = minutes(0);  // kIdle: how long
  InstanceState state = InstanceState::kRunning;
  std::optional<Duration> gone_for;  // the agent connected once and left this long ago
};

struct Case {
  std::string name;
  std::vector<Inst> instances;
  PoolDemand demand;
  int launch = 0;
  std::vector<std::string> terminate;  // ids, in order
  int min = 0;
  int max = 5;
};

ProviderConfig Config(const Case& c) {
  ProviderConfig config;
  config.type = "local";
  config.min_instances = c.min;
  config.max_instances = c.max;
  config.slots_per_instance = 4;
  return config;  // idle 5m, starting 10m, disconnected 10m
}

DeciderInput Input(const Case& c) {
  DeciderInput input;
  input.now = kNow;
  input.demand = c.demand;
  for (const Inst& i : c.instances) {
    input.instances.push_back({i.id, "default", i.state, {}, kNow - i.age});
    if (i.gone_for) input.disconnected_since[i.id] = kNow - *i.gone_for;
    switch (i.agent) {
      case Inst::kNone:
        break;
      case Inst::kIdle:
        input.agents[i.id] = {true, true, kNow - i.idle_for, {}};
        break;
      case Inst::kBusy:
        input.agents[i.id] = {true, false, {}, {}};
        break;
      case Inst::kLost:
        input.agents[i.id] = {false, false, {}, kNow - seconds(20)};
        break;
    }
  }
  return input;
}

std::vector<std::string> Ids(const std::vector<TerminateOrder>& orders) {
  std::vector<std::string> ids;
  for (const auto& order : orders) ids.push_back(order.id);
  return ids;
}

class ScaleDeciderTableTest : public ::testing::TestWithParam<Case> {};

TEST_P(ScaleDeciderTableTest, Decides) {
  const Case& c = GetParam();
  const ScaleDecision decision = DecideScale(Config(c), Input(c));
  EXPECT_EQ(decision.launch, c.launch);
  EXPECT_EQ(Ids(decision.terminate), c.terminate);
  EXPECT_EQ(decision.launch > 0, !decision.launch_reason.empty());
  for (const auto& order : decision.terminate) EXPECT_FALSE(order.reason.empty()) << order.id;
}

const Inst kStarting{.id = "s", .age = minutes(2), .state = InstanceState::kStarting};
const Inst kSpot{.id = "r", .age = minutes(1), .state = InstanceState::kSpotRequested};

INSTANTIATE_TEST_SUITE_P(
    Determined, ScaleDeciderTableTest,
    ::testing::Values(
        Case{"NothingToDo"}, Case{"PendingSlotsLaunchEnoughInstances", {}, {.pending_slots = 9}, 3},
        Case{"LaunchIsCappedByMax", {}, {.pending_slots = 40}, 5},
        Case{"LaunchToMinInstances", {}, {}, 2, {}, 2},
        Case{"StartingInstancesCountAsCapacity", {kStarting}, {.pending_slots = 8}, 1},
        Case{"PendingSpotRequestsCountAsCapacity", {kSpot}, {.pending_slots = 4}, 0},
        Case{"BusyInstancesDoNotCount",
             {{.id = "b", .agent = Inst::kBusy}},
             {.pending_slots = 4},
             1},
        Case{"IdlePastPeriodIsTerminated",
             {{.id = "i", .agent = Inst::kIdle, .idle_for = minutes(6)}},
             {},
             0,
             {"i"}},
        Case{"IdleWithinPeriodIsKept", {{.id = "i", .agent = Inst::kIdle, .idle_for = minutes(4)}}},
        Case{"IdleIsKeptAtMinInstances",
             {{.id = "i", .agent = Inst::kIdle, .idle_for = minutes(60)}},
             {},
             0,
             {},
             1},
        Case{"LongestIdleGoFirstDownToMin",
             {{.id = "a", .agent = Inst::kIdle, .idle_for = minutes(7)},
              {.id = "b", .agent = Inst::kIdle, .idle_for = minutes(9)},
              {.id = "c", .agent = Inst::kIdle, .idle_for = minutes(8)}},
             {},
             0,
             {"b", "c"},
             1},
        Case{"StoppedInstancesAreTerminated",
             {{.id = "x", .agent = Inst::kNone, .state = InstanceState::kStopped}},
             {},
             0,
             {"x"}},
        Case{"StoppedInstanceIsReplacedForMin",
             {{.id = "x", .agent = Inst::kNone, .state = InstanceState::kStopped}},
             {},
             1,
             {"x"},
             1},
        Case{"DisconnectedPastPeriodIsTerminated",
             {{.id = "d", .gone_for = minutes(11)}},
             {},
             0,
             {"d"}},
        Case{"DisconnectedWithinPeriodIsKept", {{.id = "d", .gone_for = minutes(9)}}},
        Case{"LostAgentWithinReconnectWindowIsKept", {{.id = "l", .agent = Inst::kLost}}},
        Case{"AboveMaxTrimsSpotThenIdleThenDisconnectedNeverBusy",
             {{.id = "busy-old", .agent = Inst::kBusy, .age = minutes(50)},
              {.id = "busy-new", .agent = Inst::kBusy, .age = minutes(20)},
              {.id = "idle", .agent = Inst::kIdle, .idle_for = minutes(1)},
              {.id = "gone", .gone_for = minutes(1)},
              {.id = "r", .age = minutes(1), .state = InstanceState::kSpotRequested}},
             {.pending_slots = 4},
             0,
             {"r", "idle", "gone"},
             0,
             1}),
    [](const auto& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(
    BeyondDetermined, ScaleDeciderTableTest,
    ::testing::Values(
        // Idle instances that pending work could use are not terminated.
        Case{"IdleKeptForPendingWork",
             {{.id = "i", .agent = Inst::kIdle, .idle_for = minutes(6)}},
             {.pending_slots = 2},
             1,
             {}},
        Case{"OnlyIdleBeyondPendingNeedsAreTerminated",
             {{.id = "old", .agent = Inst::kIdle, .idle_for = minutes(9)},
              {.id = "new", .agent = Inst::kIdle, .idle_for = minutes(6)}},
             {.pending_slots = 3},
             1,
             {"old"}},
        // Spot requests the demand no longer needs are cancelled, the newest first.
        Case{"StaleSpotRequestsAreCancelled",
             {{.id = "r1", .age = minutes(3), .state = InstanceState::kSpotRequested},
              {.id = "r2", .age = minutes(1), .state = InstanceState::kSpotRequested}},
             {.pending_slots = 4},
             0,
             {"r2"}},
        Case{"SpotRequestsKeptForMin",
             {{.id = "r1", .age = minutes(3), .state = InstanceState::kSpotRequested}},
             {},
             0,
             {},
             1},
        // Orphans: launched, never connected within max_agent_starting_period.
        Case{"OrphanIsTerminatedAndReplaced",
             {{.id = "o", .age = minutes(11), .state = InstanceState::kRunning}},
             {.pending_slots = 4},
             1,
             {"o"}},
        Case{"StartingWithinPeriodIsNotAnOrphan", {kStarting}}),
    [](const auto& info) { return info.param.name; });

// Issue 27: a decision that would stop running work names it and is not carried out.
TEST(ScaleDeciderTest, InstancesRunningWorkAboveMaxInstancesAreNamedNotTerminated) {
  Case c{"", {{.id = "busy-1", .agent = Inst::kBusy}, {.id = "busy-2", .agent = Inst::kBusy}}};
  c.max = 1;
  const ScaleDecision decision = DecideScale(Config(c), Input(c));
  EXPECT_TRUE(decision.terminate.empty());
  EXPECT_NE(decision.refused.find("not terminating 1 instance(s) above max_instances (1) that "
                                  "run work: busy-"),
            std::string::npos)
      << decision.refused;
}

TEST(ScaleDeciderTest, OrphansAreMarkedForTheCircuitBreaker) {
  Case c{"", {{.id = "o", .age = minutes(11)}, {.id = "d", .gone_for = minutes(11)}}};
  const ScaleDecision decision = DecideScale(Config(c), Input(c));
  ASSERT_EQ(decision.terminate.size(), 2u);
  EXPECT_TRUE(decision.terminate[0].never_connected);
  EXPECT_FALSE(decision.terminate[1].never_connected);
  EXPECT_NE(decision.terminate[0].reason.find("max_agent_starting_period (10m)"),
            std::string::npos);
}

TEST(ScaleDeciderTest, DemandOffTheBusCannotBreakIt) {
  Case c{"", {{.id = "i", .agent = Inst::kIdle, .idle_for = minutes(6)}}};
  DeciderInput input = Input(c);
  input.demand.pending_slots = -1000;  // a bad event
  ScaleDecision decision = DecideScale(Config(c), input);
  EXPECT_EQ(decision.launch, 0);
  EXPECT_EQ(Ids(decision.terminate), std::vector<std::string>{"i"});
  input.demand.pending_slots = std::numeric_limits<int32_t>::max();
  decision = DecideScale(Config(c), input);
  EXPECT_EQ(decision.launch, 4);  // up to max_instances (5) with the idle one kept
  EXPECT_TRUE(decision.terminate.empty());
}

// EC2's lists lag: a spot request's instance may run work before any list shows it as the pool's.
// Its connected agent stands for one request (the oldest), which is then neither starting nor
// cancelled as no longer needed.
TEST(ScaleDeciderTest, AnUnlistedAgentStandsForASpotRequestThatIsThenNeverCancelled) {
  Case c{"",
         {{.id = "sir-old", .age = seconds(40), .state = InstanceState::kSpotRequested},
          {.id = "sir-new", .age = seconds(10), .state = InstanceState::kSpotRequested}}};
  EXPECT_EQ(Ids(DecideScale(Config(c), Input(c)).terminate),
            (std::vector<std::string>{"sir-new", "sir-old"}))
      << "without the agent, no request is needed";
  DeciderInput input = Input(c);
  input.agents["i-unlisted"] = {true, false, {}, {}};  // busy, its instance not listed yet
  ScaleDecision decision = DecideScale(Config(c), input);
  EXPECT_EQ(Ids(decision.terminate), std::vector<std::string>{"sir-new"});
  EXPECT_EQ(decision.starting, 0);
  // Work for one more instance: the newer request is that, and nothing is launched twice.
  c.demand.pending_slots = 4;
  input = Input(c);
  input.agents["i-unlisted"] = {true, false, {}, {}};
  decision = DecideScale(Config(c), input);
  EXPECT_TRUE(decision.terminate.empty());
  EXPECT_EQ(decision.launch, 0);
  EXPECT_EQ(decision.starting, 1);
}

TEST(ScaleDeciderTest, AnUnfulfilledSpotRequestIsCancelledButIsNoFailedStart) {
  Case c{"", {{.id = "r", .age = minutes(11), .state = InstanceState::kSpotRequested}}};
  const ScaleDecision decision = DecideScale(Config(c), Input(c));
  ASSERT_EQ(decision.terminate.size(), 1u);
  EXPECT_FALSE(decision.terminate[0].never_connected);
  EXPECT_NE(decision.terminate[0].reason.find("spot request unfulfilled"), std::string::npos);
}

TEST(ScaleDeciderTest, AuxTasksInAPoolScaledToNothingGetOneInstance) {
  Case c{"", {}, {.pending_aux_tasks = 2}};
  EXPECT_EQ(DecideScale(Config(c), Input(c)).launch, 1);
  Case running{"", {{.id = "b", .agent = Inst::kBusy}}, {.pending_aux_tasks = 2}};
  EXPECT_EQ(DecideScale(Config(running), Input(running)).launch, 0);
}

TEST(ScaleDeciderTest, ZeroSlotInstancesLaunchOneForAuxTasks) {
  ProviderConfig config;
  config.slots_per_instance = 0;
  DeciderInput input;
  input.now = kNow;
  input.demand.pending_aux_tasks = 3;
  EXPECT_EQ(DecideScale(config, input).launch, 1);
}

TEST(ScaleDeciderTest, ReasonsNameTheRule) {
  Case c{"", {}, {.pending_slots = 40}};
  const ScaleDecision decision = DecideScale(Config(c), Input(c));
  EXPECT_EQ(decision.launch_reason,
            "40 pending slots need 10 instance(s); 0 starting; capped by max_instances (5)");
}

}  // namespace
}  // namespace det::autoscaler
