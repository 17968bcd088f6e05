// The fair-share scheduler's rules, one table row each: shares by weight and max_slots, taking
// back from jobs above their share, leaving out jobs whose share cannot start anything.
#include "master/cluster/scheduler/fair_share_scheduler.h"

#include <gtest/gtest.h>

#include <functional>

#include "tests/testing/pool_builder.h"

namespace det::master::scheduler {
namespace {

using testing::PoolBuilder;

// A job of `n` pending one-slot tasks named prefix1..prefixN.
void Job(PoolBuilder& p, const std::string& prefix, int n) {
  p.Pending(prefix + "1", 1);
  for (int i = 2; i <= n; ++i) p.AlsoPending(prefix + std::to_string(i), 1);
}

struct FairShareCase {
  const char* rule;
  std::function<void(PoolBuilder&)> pool;
  std::vector<int32_t> shares;  // per job, in the order jobs were added
  std::string expected;         // PoolBuilder::Render
};

// Failures name the rule, not the bytes of the case.
void PrintTo(const FairShareCase& c, std::ostream* os) { *os << c.rule; }

const FairShareCase kFairShareCases[] = {
    {"equal weights share evenly",
     [](PoolBuilder& p) {
       p.Agent("a", 4);
       Job(p, "x", 4);
       Job(p, "y", 4);
     },
     {2, 2},
     "x1>a x2>a y1>a y2>a"},
    {"weights divide the slots",
     [](PoolBuilder& p) {
       p.Agent("a", 6);
       Job(p, "x", 6);
       p.Weight(2);
       Job(p, "y", 6);
     },
     {4, 2},
     "x1>a x2>a x3>a x4>a y1>a y2>a"},
    {"max_slots caps a job and the rest flows to the others",
     [](PoolBuilder& p) {
       p.Agent("a", 4);
       Job(p, "x", 4);
       p.MaxSlots(1);
       Job(p, "y", 4);
     },
     {1, 3},
     "x1>a y1>a y2>a y3>a"},
    {"a small demand is met in full and the rest shared",
     [](PoolBuilder& p) {
       p.Agent("a", 9);
       Job(p, "x", 1);
       Job(p, "y", 10);
       Job(p, "z", 10);
     },
     {1, 4, 4},
     "x1>a y1>a y2>a y3>a y4>a z1>a z2>a z3>a z4>a"},
    {"a job above its share gives back its newest preemptible work",
     [](PoolBuilder& p) {
       p.Agent("a", 4).Running("x1", "a", 1).AlsoRunning("x2", "a", 1);
       p.AlsoRunning("x3", "a", 1).AlsoRunning("x4", "a", 1);
       Job(p, "y", 2);
     },
     {2, 2},
     "-x4 -x3"},
    {"work that is not preemptible is not taken back",
     [](PoolBuilder& p) {
       p.Agent("a", 2).Running("x1", "a", 2, 42, false);
       Job(p, "y", 2);
     },
     {1, 1},
     ""},
    {"a job whose share cannot start its smallest request is left out for the others",
     [](PoolBuilder& p) {
       p.Agent("a", 4).Agent("b", 4).PendingGang("big", 8, false);
       Job(p, "y", 8);
     },
     {0, 8},
     "y1>a y2>a y3>a y4>a y5>b y6>b y7>b y8>b"},
    {"requests larger than the pool are not counted",
     [](PoolBuilder& p) {
       p.Agent("a", 2).Pending("huge", 3);
       Job(p, "y", 2);
     },
     {0, 2},
     "y1>a y2>a"},
};

class FairShareRuleTest : public ::testing::TestWithParam<FairShareCase> {};

TEST_P(FairShareRuleTest, Holds) {
  const FairShareCase& rule = GetParam();
  PoolBuilder builder;
  rule.pool(builder);
  SchedulerConfig config;
  config.type = SchedulerConfig::Type::kFairShare;
  EXPECT_EQ(FairShares(builder.view()), rule.shares) << rule.rule;
  EXPECT_EQ(builder.Render(ScheduleFairShare(builder.view(), config)), rule.expected) << rule.rule;
}

INSTANTIATE_TEST_SUITE_P(Rules, FairShareRuleTest, ::testing::ValuesIn(kFairShareCases));

TEST(FairShareTest, ManyJobsWhoseSharesCannotStartAnythingLeaveTheOldestToRun) {
  PoolBuilder builder;
  builder.Agent("a", 8);
  for (int i = 0; i < 70; ++i) builder.Pending("job" + std::to_string(i), 8);
  const std::vector<int32_t> shares = FairShares(builder.view());
  EXPECT_EQ(shares[0], 8);
  EXPECT_EQ(std::count(shares.begin(), shares.end(), 0), 69);
  SchedulerConfig config;
  config.type = SchedulerConfig::Type::kFairShare;
  EXPECT_EQ(builder.Render(ScheduleFairShare(builder.view(), config)), "job0>a");
}

}  // namespace
}  // namespace det::master::scheduler
