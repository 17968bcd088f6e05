#include "master/task_manager.h"

#include <gtest/gtest.h>

namespace det::master {
namespace {

// Records what the manager asks for.
class RecordingListener : public TaskManager::Listener {
 public:
  void StartWorkload(const std::string& agent, const bus::WorkloadStart& start) override {
    starts.push_back({agent, start});
  }
  void KillWorkload(const std::string& agent, const bus::WorkloadKill& kill) override {
    kills.push_back({agent, kill});
  }
  void TaskChanged(const Task& task) override { changes.push_back(task.id + ":" + task.state); }

  std::vector<std::pair<std::string, bus::WorkloadStart>> starts;
  std::vector<std::pair<std::string, bus::WorkloadKill>> kills;
  std::vector<std::string> changes;
};

TaskSpec Command(int slots, std::string pool = "default") {
  return {{"true"}, slots, std::move(pool), {}};
}

bus::WorkloadState Report(const std::string& allocation, std::string_view state, int code = 0,
                          std::string_view failure = {}) {
  return {allocation, "", std::string(state), code, std::string(failure), ""};
}

class TaskManagerTest : public ::testing::Test {
 protected:
  RecordingListener listener_;
  TaskManager manager_{listener_, "127.0.0.1:8090"};
};

TEST_F(TaskManagerTest, QueuedTaskIsPlacedFirstFitWhenAnAgentArrives) {
  auto id = manager_.Submit(Command(2), 1);
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(manager_.Find(*id)->state, "QUEUED");
  EXPECT_TRUE(listener_.starts.empty());

  manager_.SetAgent("a1", "default", {"s0", "s1", "s2"});
  ASSERT_EQ(listener_.starts.size(), 1u);
  EXPECT_EQ(listener_.starts[0].first, "a1");
  const bus::WorkloadStart& start = listener_.starts[0].second;
  EXPECT_EQ(start.slot_ids, (std::vector<std::string>{"s0", "s1"}));
  EXPECT_EQ(start.master_address, "127.0.0.1:8090");
  EXPECT_FALSE(start.session_token.empty());
  EXPECT_EQ(manager_.Find(*id)->state, "ASSIGNED");
}

TEST_F(TaskManagerTest, TaskWaitsUntilSlotsAreFreedAndSkipsAgentsOfOtherPools) {
  manager_.SetAgent("gpu", "gpus", {"g0", "g1"});
  manager_.SetAgent("cpu", "default", {"c0"});
  auto first = manager_.Submit(Command(1), 1);
  auto second = manager_.Submit(Command(1), 2);
  ASSERT_EQ(listener_.starts.size(), 1u);
  EXPECT_EQ(listener_.starts[0].first, "cpu");
  EXPECT_EQ(manager_.queued(), 1u);

  const std::string allocation = listener_.starts[0].second.allocation_id;
  manager_.OnWorkloadState("cpu", Report(allocation, bus::kWorkloadRunning), 3);
  EXPECT_EQ(manager_.Find(*first)->state, "RUNNING");
  manager_.OnWorkloadState("cpu", Report(allocation, bus::kWorkloadTerminated, 0), 4);
  EXPECT_EQ(manager_.Find(*first)->state, "TERMINATED");
  EXPECT_EQ(manager_.Find(*first)->ended_ns, 4);
  ASSERT_EQ(listener_.starts.size(), 2u);
  EXPECT_EQ(listener_.starts[1].second.task_id, *second);
}

TEST_F(TaskManagerTest, ReportsFromAnotherAgentOrForUnknownAllocationsAreIgnored) {
  manager_.SetAgent("a1", "default", {"s0"});
  auto id = manager_.Submit(Command(1), 1);
  const std::string allocation = listener_.starts[0].second.allocation_id;
  manager_.OnWorkloadState("a2", Report(allocation, bus::kWorkloadTerminated), 2);
  manager_.OnWorkloadState("a1", Report("nope.1", bus::kWorkloadTerminated), 2);
  EXPECT_EQ(manager_.Find(*id)->state, "ASSIGNED");
}

TEST_F(TaskManagerTest, KillOfAQueuedTaskEndsItAndOfARunningOneAsksTheAgent) {
  manager_.SetAgent("a1", "default", {"s0"});
  auto running = manager_.Submit(Command(1), 1);
  auto queued = manager_.Submit(Command(1), 2);
  EXPECT_EQ(*manager_.Kill(*queued, 3), "TERMINATED");
  EXPECT_EQ(manager_.Find(*queued)->failure_type, "Killed");
  EXPECT_EQ(manager_.queued(), 0u);

  EXPECT_EQ(*manager_.Kill(*running, 4), "ASSIGNED");
  ASSERT_EQ(listener_.kills.size(), 1u);
  EXPECT_EQ(listener_.kills[0].first, "a1");
  const std::string allocation = listener_.starts[0].second.allocation_id;
  manager_.OnWorkloadState("a1", Report(allocation, bus::kWorkloadTerminated, 143, "TaskError"), 5);
  EXPECT_EQ(manager_.Find(*running)->failure_type, "Killed");
  EXPECT_EQ(manager_.Find(*running)->exit_code, 143);
  EXPECT_EQ(manager_.Kill("unknown", 6).status().code(), StatusCode::kNotFound);
}

TEST_F(TaskManagerTest, RemovedAgentFailsItsTasksWithAgentFailedAndFreesNothingElse) {
  manager_.SetAgent("a1", "default", {"s0"});
  manager_.SetAgent("a2", "default", {"s0"});
  ASSERT_TRUE(manager_.Submit(Command(1), 1).ok());
  ASSERT_TRUE(manager_.Submit(Command(1), 2).ok());
  ASSERT_EQ(listener_.starts.size(), 2u);
  manager_.RemoveAgent(listener_.starts[0].first, 3);
  const Task* failed = manager_.Find(listener_.starts[0].second.task_id);
  EXPECT_EQ(failed->state, "TERMINATED");
  EXPECT_EQ(failed->failure_type, "AgentFailed");
  const Task* other = manager_.Find(listener_.starts[1].second.task_id);
  EXPECT_EQ(other->state, "ASSIGNED");
}

TEST_F(TaskManagerTest, UnschedulableAgentGetsNoNewWork) {
  manager_.SetAgent("a1", "default", {"s0"});
  manager_.SetAgentSchedulable("a1", false);
  ASSERT_TRUE(manager_.Submit(Command(1), 1).ok());
  EXPECT_TRUE(listener_.starts.empty());
  manager_.SetAgentSchedulable("a1", true);
  EXPECT_EQ(listener_.starts.size(), 1u);
}

TEST_F(TaskManagerTest, BadSpecsAreRefusedWithTheReason) {
  auto empty = manager_.Submit({{}, 1, "default", {}}, 1);
  EXPECT_EQ(empty.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(empty.status().message().find("entrypoint"), std::string::npos);
  auto negative = manager_.Submit(Command(-1), 1);
  EXPECT_NE(negative.status().message().find("-1"), std::string::npos);
}

TEST_F(TaskManagerTest, ListIsInSubmissionOrder) {
  auto a = manager_.Submit(Command(1), 1);
  auto b = manager_.Submit(Command(1), 2);
  auto list = manager_.List();
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].id, *a);
  EXPECT_EQ(list[1].id, *b);
  EXPECT_EQ(list[0].state, "QUEUED");
}

}  // namespace
}  // namespace det::master

namespace det::master {
namespace {

TEST_F(TaskManagerTest, DisabledAgentGetsNoWorkAndWithoutDrainItsTasksAreKilled) {
  manager_.SetAgent("a1", "default", {"s0", "s1"});
  auto running = manager_.Submit(Command(1), 1);
  ASSERT_TRUE(manager_.SetAgentEnabled("a1", false, /*drain=*/true).ok());
  EXPECT_TRUE(listener_.kills.empty());
  EXPECT_TRUE(manager_.Usage("a1").draining);
  ASSERT_TRUE(manager_.Submit(Command(1), 2).ok());
  EXPECT_EQ(listener_.starts.size(), 1u);

  ASSERT_TRUE(manager_.SetAgentEnabled("a1", false, /*drain=*/false).ok());
  ASSERT_EQ(listener_.kills.size(), 1u);
  EXPECT_EQ(listener_.kills[0].second.allocation_id, manager_.Find(*running)->allocation_id);
  EXPECT_FALSE(manager_.Usage("a1").draining);

  ASSERT_TRUE(manager_.SetAgentEnabled("a1", true, false).ok());
  EXPECT_EQ(listener_.starts.size(), 2u);
  EXPECT_EQ(manager_.SetAgentEnabled("zz", true, false).code(), StatusCode::kNotFound);
}

TEST_F(TaskManagerTest, DisabledSlotIsSkippedAndUnknownSlotsAreNamed) {
  manager_.SetAgent("a1", "default", {"s0", "s1"});
  ASSERT_TRUE(manager_.SetSlotEnabled("a1", "s0", false).ok());
  ASSERT_TRUE(manager_.Submit(Command(1), 1).ok());
  ASSERT_TRUE(manager_.Submit(Command(1), 2).ok());
  ASSERT_EQ(listener_.starts.size(), 1u);
  EXPECT_EQ(listener_.starts[0].second.slot_ids, std::vector<std::string>{"s1"});
  EXPECT_EQ(manager_.Usage("a1").disabled_slots, std::vector<std::string>{"s0"});
  Status unknown = manager_.SetSlotEnabled("a1", "s9", false);
  EXPECT_NE(unknown.message().find("has no slot s9"), std::string::npos);
  ASSERT_TRUE(manager_.SetSlotEnabled("a1", "s0", true).ok());
  EXPECT_EQ(listener_.starts.size(), 2u);
}

TEST_F(TaskManagerTest, RestoredTaskHoldsItsSlotsUntilItsAgentReportsIt) {
  Task restored;
  restored.id = "t1";
  restored.spec = Command(1);
  restored.allocation_id = "t1.1";
  restored.agent_id = "a1";
  restored.slot_ids = {"s0"};
  restored.state = "RUNNING";
  manager_.Restore(restored);
  EXPECT_EQ(manager_.AwaitedAgents(), std::vector<std::string>{"a1"});
  manager_.SetAgent("a1", "default", {"s0"});
  ASSERT_TRUE(manager_.Submit(Command(1), 1).ok());
  EXPECT_TRUE(listener_.starts.empty());  // s0 is held by the restored task
  // The agent does not report it: it ended with the agent's restart.
  manager_.Reconcile("a1", {}, /*complete=*/true, 2);
  EXPECT_EQ(manager_.Find("t1")->failure_type, "AgentFailed");
  EXPECT_EQ(listener_.starts.size(), 1u);
}

}  // namespace
}  // namespace det::master

namespace det::master {
namespace {

TEST_F(TaskManagerTest, ReconcileKillsWorkloadsNoTaskWantsAndResendsRequestedKills) {
  manager_.SetAgent("a1", "default", {"s0", "s1"});
  auto ended = manager_.Submit(Command(1), 1);
  ASSERT_TRUE(manager_.Submit(Command(1), 2).ok());  // also ends; its agent does not report it
  const std::string ended_allocation = manager_.Find(*ended)->allocation_id;
  manager_.RemoveAgent("a1", 3);  // both end with AgentFailed while the agent is away
  manager_.SetAgent("a1", "default", {"s0", "s1"});
  manager_.Reconcile("a1",
                     {Report(ended_allocation, bus::kWorkloadRunning),
                      Report("stranger.1", bus::kWorkloadRunning)},
                     /*complete=*/true, 4);
  ASSERT_EQ(listener_.kills.size(), 2u);
  EXPECT_EQ(listener_.kills[0].second.allocation_id, ended_allocation);
  EXPECT_EQ(listener_.kills[0].second.grace_ms, 0);
  EXPECT_EQ(listener_.kills[1].second.allocation_id, "stranger.1");
}

TEST_F(TaskManagerTest, KillOfAnAssignedTaskWhoseStartWasLostEndsItOnReconcile) {
  manager_.SetAgent("a1", "default", {"s0"});
  auto id = manager_.Submit(Command(1), 1);
  ASSERT_TRUE(manager_.Kill(*id, 2).ok());
  manager_.Reconcile("a1", {}, /*complete=*/true, 3);
  EXPECT_EQ(manager_.Find(*id)->state, "TERMINATED");
  EXPECT_EQ(manager_.Find(*id)->failure_type, "Killed");
  EXPECT_EQ(listener_.starts.size(), 1u);  // not started again
}

}  // namespace
}  // namespace det::master
