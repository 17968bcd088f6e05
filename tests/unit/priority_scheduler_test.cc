// The priority scheduler's rules, one table row each: order, fitting, blocking and backfill,
// preemption choice and its no-op case, gang fits, zero-slot tasks.
#include "master/cluster/scheduler/priority_scheduler.h"

#include <gtest/gtest.h>

#include <functional>

#include "tests/testing/pool_builder.h"

namespace det::master::scheduler {
namespace {

using testing::PoolBuilder;
using Fitting = SchedulerConfig::Fitting;

struct PriorityCase {
  const char* rule;
  std::function<void(PoolBuilder&)> pool;
  std::string expected;  // PoolBuilder::Render
  bool preemption = false;
  Fitting fitting = Fitting::kBest;
};

// Failures name the rule, not the bytes of the case.
void PrintTo(const PriorityCase& c, std::ostream* os) { *os << c.rule; }

const PriorityCase kPriorityCases[] = {
    {"a job at its max_slots gets no more and blocks no one less urgent",
     [](PoolBuilder& p) {
       p.Agent("a", 4).Pending("e1", 1, 10).AlsoPending("e2", 1).AlsoPending("e3", 1).MaxSlots(2);
       p.Pending("other", 1, 50);
     },
     "e1>a e2>a other>a"},
    {"most urgent first, then submission order",
     [](PoolBuilder& p) {
       p.Agent("a", 2).Pending("t1", 1, 50).Pending("t2", 1, 10).Pending("t3", 1, 10);
     },
     "t2>a t3>a"},
    {"best fit packs onto the agent with the fewest free slots that suffice",
     [](PoolBuilder& p) { p.Agent("a", 4).Agent("b", 4, 2).Agent("c", 4, 3).Pending("t", 2); },
     "t>b"},
    {"worst fit spreads onto the agent with the most free slots",
     [](PoolBuilder& p) { p.Agent("a", 4, 2).Agent("b", 4).Agent("c", 4, 3).Pending("t", 2); },
     "t>b", false, Fitting::kWorst},
    {"ties go to the earlier agent (best fit)",
     [](PoolBuilder& p) { p.Agent("a", 4).Agent("b", 4).Pending("t", 1); }, "t>a"},
    {"ties go to the earlier agent (worst fit)",
     [](PoolBuilder& p) { p.Agent("a", 4).Agent("b", 4).Pending("t", 1); }, "t>a", false,
     Fitting::kWorst},
    {"an agent that takes no work gets none",
     [](PoolBuilder& p) { p.Unschedulable("a", 4).Agent("b", 2).Pending("t", 1); }, "t>b"},
    {"nothing less urgent is placed past a blocked request",
     [](PoolBuilder& p) {
       p.Agent("a", 2)
           .Running("r", "a", 1, 42, false)
           .Pending("big", 2, 10)
           .Pending("small", 1, 50);
     },
     ""},
    {"the same priority backfills past a blocked request",
     [](PoolBuilder& p) {
       p.Agent("a", 2)
           .Running("r", "a", 1, 42, false)
           .Pending("big", 2, 42)
           .Pending("small", 1, 42);
     },
     "small>a*"},
    {"preemption frees the newest of the least urgent",
     [](PoolBuilder& p) {
       p.Agent("a", 2).Running("old", "a", 1, 60).Running("new", "a", 1, 60).Pending("u", 1, 10);
     },
     "-new", true},
    {"preemption prefers less urgent work over newer work",
     [](PoolBuilder& p) {
       p.Agent("a", 2).Running("low", "a", 1, 70).Running("mid", "a", 1, 50).Pending("u", 1, 10);
     },
     "-low", true},
    {"no new preemption when those under way already make room",
     [](PoolBuilder& p) {
       p.Agent("a", 2).Preempting("going", "a", 1, 60).Running("r", "a", 1, 60).Pending("u", 1, 10);
     },
     "", true},
    {"work that is not preemptible, or as urgent, is never preempted",
     [](PoolBuilder& p) {
       p.Agent("a", 2).Running("fixed", "a", 1, 60, false).Running("peer", "a", 1, 10);
       p.Pending("u", 1, 10);
     },
     "", true},
    {"work of the same priority behind it in the queue makes way",
     [](PoolBuilder& p) { p.Agent("a", 1).Pending("first", 1).Running("later", "a", 1); }, "-later",
     true},
    {"with preemption, less urgent preemptible work backfills; the rest waits",
     [](PoolBuilder& p) {
       p.Agent("a", 3).Running("fixed", "a", 1, 42, false).Pending("big", 3, 10);
       p.Pending("rigid", 1, 50).Pending("flexible", 1, 50).Preemptible();
     },
     "flexible>a*", true},
    {"only work on the agents of the fit is preempted",
     [](PoolBuilder& p) {
       p.Agent("a", 1).Agent("b", 2).Running("x", "a", 1, 70).Running("y", "b", 2, 60);
       p.Pending("u", 2, 10);
     },
     "-y", true},
    {"room made for one blocked request is not counted twice",
     [](PoolBuilder& p) {
       p.Agent("a", 2).Running("l1", "a", 1, 60).Running("l2", "a", 1, 60);
       p.Pending("u1", 1, 10).Pending("u2", 1, 10);
     },
     "-l2 -l1", true},
    {"nothing is preempted when even all of it would not make room",
     [](PoolBuilder& p) { p.Agent("a", 2).Running("l", "a", 1, 60).Pending("u", 4, 10); }, "",
     true},
    {"a multi-slot request takes one agent when one has room",
     [](PoolBuilder& p) { p.Agent("a", 4).Agent("b", 8).PendingGang("g", 8, false); }, "g>b"},
    {"a gang fit spans fully idle agents of a size that divides the request",
     [](PoolBuilder& p) {
       p.Agent("a", 4).Agent("b", 4, 1).Agent("c", 4).Agent("d", 4).PendingGang("g", 8, false);
     },
     "g>a+c"},
    {"a gang fit prefers the largest agents",
     [](PoolBuilder& p) {
       p.Agent("a", 2).Agent("b", 2).Agent("c", 4).Agent("d", 4).PendingGang("g", 8, false);
     },
     "g>c+d"},
    {"no gang fit when the agent size does not divide the request",
     [](PoolBuilder& p) { p.Agent("a", 4).Agent("b", 4).PendingGang("g", 6, false); }, ""},
    {"is_single_node forbids a gang fit",
     [](PoolBuilder& p) { p.Agent("a", 4).Agent("b", 4).PendingGang("g", 8, true); }, ""},
    {"zero-slot tasks are placed even when slot requests wait, on the least loaded agent",
     [](PoolBuilder& p) {
       p.Agent("a", 1)
           .Agent("b", 1)
           .Running("r", "a", 1, 42, false)
           .Running("s", "b", 1, 42, false);
       p.Pending("big", 1, 10).Pending("aux1", 0, 50).Pending("aux2", 0, 50);
     },
     "aux1>a aux2>b"},
};

class PriorityRuleTest : public ::testing::TestWithParam<PriorityCase> {};

TEST_P(PriorityRuleTest, Holds) {
  const PriorityCase& rule = GetParam();
  PoolBuilder builder;
  rule.pool(builder);
  SchedulerConfig config;
  config.preemption = rule.preemption;
  config.fitting = rule.fitting;
  EXPECT_EQ(builder.Render(SchedulePriority(builder.view(), config)), rule.expected) << rule.rule;
}

INSTANTIATE_TEST_SUITE_P(Rules, PriorityRuleTest, ::testing::ValuesIn(kPriorityCases));

TEST(PrioritySchedulerTest, AuxTasksStopAtTheLimitPerAgent) {
  PoolBuilder builder;
  builder.Agent("a", 1).Pending("x1", 0).Pending("x2", 0).Pending("x3", 0);
  PoolBuilder::View pool = builder.view();
  pool.max_aux_per_agent = 2;
  EXPECT_EQ(builder.Render(SchedulePriority(pool, {})), "x1>a x2>a");
}

}  // namespace
}  // namespace det::master::scheduler
