// What the scheduler tells the outside: requests that can never fit (refused at submit) and the
// pending demand the autoscaler scales for.
#include <gtest/gtest.h>

#include "master/cluster/scheduler/fit_check.h"
#include "master/cluster/scheduler/pending_demand.h"
#include "tests/testing/pool_builder.h"

namespace det::master::scheduler {
namespace {

using testing::PoolBuilder;

struct FitCase {
  const char* rule;
  int32_t slots;
  bool single_node;
  std::vector<int32_t> agents;
  std::optional<ProviderSize> provider;
  std::string error;  // empty: fits; else a part of the message
};

void PrintTo(const FitCase& c, std::ostream* os) { *os << c.rule; }

class CanEverFitTest : public ::testing::TestWithParam<FitCase> {};

TEST_P(CanEverFitTest, Holds) {
  const FitCase& c = GetParam();
  const Status status = CheckCanEverFit(c.slots, c.single_node, "gpu", c.agents, c.provider);
  if (c.error.empty()) {
    EXPECT_TRUE(status.ok()) << status.ToString();
  } else {
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(status.message().find(c.error), std::string::npos) << status.message();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Rules, CanEverFitTest,
    ::testing::Values(
        FitCase{"fits one agent", 8, true, {4, 8}, std::nullopt, ""},
        FitCase{"too big for any agent of a static pool",
                16,
                true,
                {8, 8},
                std::nullopt,
                "the task asks for 16 slots, but pool \"gpu\" can never provide them: it has 2 "
                "agents of 8 slots; the task is single-node"},
        FitCase{"a gang over agents of one size", 16, false, {8, 8, 4}, std::nullopt, ""},
        FitCase{"not a multiple of any agent size",
                12,
                false,
                {8, 8},
                std::nullopt,
                "it has 2 agents of 8 slots; a task spans agents only as a multiple"},
        FitCase{"more agents than the pool has", 24, false, {8, 8}, std::nullopt, "2 agents"},
        FitCase{
            "a pool with no agents and no provider cannot judge", 64, true, {}, std::nullopt, ""},
        FitCase{"a provider pool within one instance", 8, true, {}, ProviderSize{5, 8}, ""},
        FitCase{"a provider pool over instances", 40, false, {}, ProviderSize{5, 8}, ""},
        FitCase{"beyond max_instances",
                48,
                false,
                {},
                ProviderSize{5, 8},
                "it grows to at most 5 instances of 8 slots"},
        FitCase{"single-node beyond one instance",
                16,
                true,
                {},
                ProviderSize{5, 8},
                "the task is single-node"},
        FitCase{"zero slots always fit", 0, true, {}, std::nullopt, ""}));

TEST(PendingDemandTest, CountsWhatAnInstanceCouldRunCappedPerJob) {
  PoolBuilder builder;
  builder.Agent("a", 8).Running("busy", "a", 8);
  builder.Pending("one", 1).Pending("eight", 8).Pending("sixteen", 16);
  builder.Pending("twelve", 12);  // neither <= 8 nor a multiple of 8: no instance runs it
  builder.Pending("capped", 4).AlsoPending("capped-2", 4).MaxSlots(6);
  builder.Pending("aux", 0);
  const PendingDemand demand = CountPending(builder.view(), 8);
  EXPECT_EQ(demand.slots, 1 + 8 + 16 + 6);
  EXPECT_EQ(demand.aux_tasks, 1);
  EXPECT_EQ(demand.tasks, 6);
  EXPECT_EQ(demand.largest, 16);
  EXPECT_EQ(CountPending(builder.view(), 0).slots, 1 + 8 + 16 + 12 + 6);  // no provider
}

}  // namespace
}  // namespace det::master::scheduler
