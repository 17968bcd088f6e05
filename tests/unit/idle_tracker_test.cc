#include "master/cluster/idle_tracker.h"

#include <gtest/gtest.h>

namespace det::master {
namespace {

TEST(IdleTrackerTest, IdleSinceIsKeptWhileIdleAndChangesAreReported) {
  IdleTracker tracker;
  EXPECT_TRUE(tracker.Update({{"a1", "default", true}, {"a2", "default", false}}, 100));
  EXPECT_FALSE(tracker.Update({{"a1", "default", true}, {"a2", "default", false}}, 200));
  auto idle = tracker.current();
  ASSERT_EQ(idle.agents.size(), 1u);
  EXPECT_EQ(idle.agents[0].agent_id, "a1");
  EXPECT_EQ(idle.agents[0].idle_since, 100);

  EXPECT_TRUE(tracker.Update({{"a1", "default", false}, {"a2", "default", true}}, 300));
  idle = tracker.current();
  ASSERT_EQ(idle.agents.size(), 1u);
  EXPECT_EQ(idle.agents[0].agent_id, "a2");
  EXPECT_EQ(idle.agents[0].idle_since, 300);
  EXPECT_TRUE(tracker.Update({}, 400));  // a2 left
  EXPECT_TRUE(tracker.current().agents.empty());
}

}  // namespace
}  // namespace det::master
