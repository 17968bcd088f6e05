#include "master/cluster/task_manager.h"

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
  void TaskSettingsChanged(const Task& task) override { settings.push_back(task.id); }
  void PendingChanged(const bus::ClusterPending& p) override { pending.push_back(p); }

  std::vector<std::pair<std::string, bus::WorkloadStart>> starts;
  std::vector<std::pair<std::string, bus::WorkloadKill>> kills;
  std::vector<std::string> changes;
  std::vector<std::string> settings;
  std::vector<bus::ClusterPending> pending;
};

TaskSpec Command(int slots, std::string pool = "default") {
  TaskSpec spec;
  spec.entrypoint = {"true"};
  spec.slots = slots;
  spec.resource_pool = std::move(pool);
  return spec;
}

// Two pools: "default" (priority scheduler with preemption, a 5 s preemption timeout) and "gpus".
ResourcesConfig TwoPools() {
  ResourcesConfig config;
  config.resource_pools = {{.pool_name = "default"}, {.pool_name = "gpus"}};
  config.resource_pools[0].scheduler.preemption = true;
  config.resource_pools[0].preemption_timeout = std::chrono::seconds(5);
  return config;
}

bus::WorkloadState State(const std::string& allocation, std::string_view state, int code = 0,
                         std::string_view failure = {}) {
  return {allocation, "", std::string(state), code, std::string(failure), ""};
}

// The manager under test; every change is followed by a scheduling pass, as the registry's loop
// does after each batch of messages.
class TaskManagerTest : public ::testing::Test {
 protected:
  Result<std::string> Submit(TaskSpec spec, int64_t now) {
    auto id = manager_.Submit(std::move(spec), now);
    manager_.Schedule();
    return id;
  }
  void Agent(const std::string& id, const std::string& pool, std::vector<std::string> slots) {
    manager_.SetAgent(id, pool, slots);
    manager_.Schedule();
  }
  void Report(const std::string& agent, const std::string& allocation, std::string_view state,
              int code = 0, std::string_view failure = {}, int64_t now = 10) {
    manager_.OnWorkloadState(
        agent, {allocation, "", std::string(state), code, std::string(failure), ""}, now);
    manager_.Schedule();
  }

  RecordingListener listener_;
  TaskManager manager_{listener_, TwoPools(), "127.0.0.1:8090"};
};

TEST_F(TaskManagerTest, QueuedTaskIsPlacedWhenAnAgentArrives) {
  auto id = Submit(Command(2), 1);
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(manager_.Find(*id)->state, "QUEUED");
  EXPECT_TRUE(listener_.starts.empty());

  Agent("a1", "default", {"s0", "s1", "s2"});
  ASSERT_EQ(listener_.starts.size(), 1u);
  EXPECT_EQ(listener_.starts[0].first, "a1");
  const bus::WorkloadStart& start = listener_.starts[0].second;
  EXPECT_EQ(start.slot_ids, (std::vector<std::string>{"s0", "s1"}));
  EXPECT_EQ(start.master_address, "127.0.0.1:8090");
  EXPECT_FALSE(start.session_token.empty());
  EXPECT_EQ(manager_.Find(*id)->state, "ASSIGNED");
}

TEST_F(TaskManagerTest, TaskWaitsUntilSlotsAreFreedAndSkipsAgentsOfOtherPools) {
  Agent("gpu", "gpus", {"g0", "g1"});
  Agent("cpu", "default", {"c0"});
  auto first = Submit(Command(1), 1);
  auto second = Submit(Command(1), 2);
  ASSERT_EQ(listener_.starts.size(), 1u);
  EXPECT_EQ(listener_.starts[0].first, "cpu");
  EXPECT_EQ(manager_.queued(), 1u);

  const std::string allocation = listener_.starts[0].second.allocation_id;
  Report("cpu", allocation, bus::kWorkloadRunning, 0, {}, 3);
  EXPECT_EQ(manager_.Find(*first)->state, "RUNNING");
  Report("cpu", allocation, bus::kWorkloadTerminated, 0, {}, 4);
  EXPECT_EQ(manager_.Find(*first)->state, "TERMINATED");
  EXPECT_EQ(manager_.Find(*first)->ended_ns, 4);
  ASSERT_EQ(listener_.starts.size(), 2u);
  EXPECT_EQ(listener_.starts[1].second.task_id, *second);
}

TEST_F(TaskManagerTest, ReportsFromAnotherAgentOrForUnknownAllocationsAreIgnored) {
  Agent("a1", "default", {"s0"});
  auto id = Submit(Command(1), 1);
  const std::string allocation = listener_.starts[0].second.allocation_id;
  Report("a2", allocation, bus::kWorkloadTerminated, 0, {}, 2);
  Report("a1", "nope.1", bus::kWorkloadTerminated, 0, {}, 2);
  EXPECT_EQ(manager_.Find(*id)->state, "ASSIGNED");
}

TEST_F(TaskManagerTest, KillOfAQueuedTaskEndsItAndOfARunningOneAsksTheAgent) {
  Agent("a1", "default", {"s0"});
  auto running = Submit(Command(1), 1);
  auto queued = Submit(Command(1), 2);
  EXPECT_EQ(*manager_.Kill(*queued, 3), "TERMINATED");
  EXPECT_EQ(manager_.Find(*queued)->failure_type, "Killed");
  EXPECT_EQ(manager_.queued(), 0u);

  EXPECT_EQ(*manager_.Kill(*running, 4), "ASSIGNED");
  ASSERT_EQ(listener_.kills.size(), 1u);
  EXPECT_EQ(listener_.kills[0].first, "a1");
  const std::string allocation = listener_.starts[0].second.allocation_id;
  Report("a1", allocation, bus::kWorkloadTerminated, 143, "TaskError", 5);
  EXPECT_EQ(manager_.Find(*running)->failure_type, "Killed");
  EXPECT_EQ(manager_.Find(*running)->exit_code, 143);
  EXPECT_EQ(manager_.Kill("unknown", 6).status().code(), StatusCode::kNotFound);
}

TEST_F(TaskManagerTest, AnArrayIsOneTaskPerIndexEachToldItsIndex) {
  Agent("a1", "default", {"s0", "s1"});
  auto array = manager_.SubmitArray(Command(1), {3, 1, 7}, 1);
  manager_.Schedule();
  ASSERT_TRUE(array.ok()) << array.status().ToString();
  const std::vector<const Task*> tasks = manager_.ArrayTasks(*array);
  ASSERT_EQ(tasks.size(), 3u);
  EXPECT_EQ(tasks[0]->id, *array + "_1");
  EXPECT_EQ(tasks[2]->id, *array + "_7");
  EXPECT_EQ(tasks[0]->job_id, tasks[0]->id);  // each its own job in the queue
  EXPECT_EQ(tasks[1]->Summary().array_id, *array);
  EXPECT_EQ(tasks[1]->Summary().array_index, 3);
  ASSERT_EQ(listener_.starts.size(), 2u);  // two slots: two run, one waits
  for (const auto& [agent, start] : listener_.starts) {
    const std::string index = start.env.at("DET_ARRAY_INDEX");
    EXPECT_EQ(start.env.at("DET_ARRAY_ID"), *array);
    EXPECT_TRUE(start.allocation_id.starts_with(*array + "_" + index + ".")) << start.allocation_id;
  }
  EXPECT_EQ(manager_.queued(), 1u);
}

TEST_F(TaskManagerTest, AnArrayIsCheckedAsOneTaskAndMadeWholeOrNotAtAll) {
  EXPECT_EQ(manager_.SubmitArray(Command(1, "nowhere"), {1, 2}, 1).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(manager_.SubmitArray(Command(1), {}, 1).status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(manager_.List().empty());
}

TEST_F(TaskManagerTest, KillingAnArrayStopsItsUnfinishedTasksAndOneCanBeKilledAlone) {
  Agent("a1", "default", {"s0"});
  auto array = manager_.SubmitArray(Command(1), {1, 2, 3}, 1);
  manager_.Schedule();
  ASSERT_TRUE(array.ok());
  EXPECT_EQ(*manager_.Kill(*array + "_3", 2), "TERMINATED");  // one alone, still queued
  EXPECT_EQ(*manager_.KillArray(*array, 3), 2);               // the running one and the queued one
  ASSERT_EQ(listener_.kills.size(), 1u);
  EXPECT_EQ(manager_.Find(*array + "_2")->failure_type, "Killed");
  EXPECT_EQ(manager_.KillArray("0123456789abcdef0123456789abcdef", 4).status().code(),
            StatusCode::kNotFound);
}

TEST(ArrayTaskIdTest, OnlyArrayIdsAreReadAsArrayPlaces) {
  const std::string array = "0123456789abcdef0123456789abcdef";
  ASSERT_TRUE(ArrayPlaceOf(ArrayTaskId(array, 42)).has_value());
  EXPECT_EQ(ArrayPlaceOf(ArrayTaskId(array, 42))->array_id, array);
  EXPECT_EQ(ArrayPlaceOf(ArrayTaskId(array, 42))->index, 42);
  EXPECT_FALSE(ArrayPlaceOf(array).has_value());
  EXPECT_FALSE(ArrayPlaceOf("trial-3-1").has_value());
  EXPECT_FALSE(ArrayPlaceOf(array + "_").has_value());
  EXPECT_FALSE(ArrayPlaceOf(array + "_1x").has_value());
  EXPECT_FALSE(ArrayPlaceOf("0123456789ABCDEF0123456789abcdef_1").has_value());
}

TEST_F(TaskManagerTest, RemovedAgentFailsItsTasksWithAgentFailedAndFreesNothingElse) {
  Agent("a1", "default", {"s0"});
  Agent("a2", "default", {"s0"});
  ASSERT_TRUE(Submit(Command(1), 1).ok());
  ASSERT_TRUE(Submit(Command(1), 2).ok());
  ASSERT_EQ(listener_.starts.size(), 2u);
  manager_.RemoveAgent(listener_.starts[0].first, 3);
  manager_.Schedule();
  const Task* failed = manager_.Find(listener_.starts[0].second.task_id);
  EXPECT_EQ(failed->state, "TERMINATED");
  EXPECT_EQ(failed->failure_type, "AgentFailed");
  const Task* other = manager_.Find(listener_.starts[1].second.task_id);
  EXPECT_EQ(other->state, "ASSIGNED");
}

TEST_F(TaskManagerTest, ACommandWithRestartsLeftIsQueuedAgainWhenItsAgentIsLost) {
  Agent("a1", "default", {"s0"});
  TaskSpec spec = Command(1);
  spec.max_restarts = 1;
  auto id = Submit(spec, 1);
  ASSERT_TRUE(id.ok());
  manager_.RemoveAgent("a1", 3);
  manager_.Schedule();
  const Task* task = manager_.Find(*id);
  EXPECT_EQ(task->state, "QUEUED");
  EXPECT_EQ(task->restarts, 1);
  EXPECT_EQ(task->message,
            "agent a1 was lost and did not come back in time; queued again (restart 1 of 1)");
  EXPECT_EQ(listener_.settings, std::vector<std::string>{*id}) << "the count is stored";
  Agent("a2", "default", {"s0"});
  ASSERT_EQ(listener_.starts.size(), 2u);
  EXPECT_EQ(listener_.starts[1].second.allocation_id, *id + ".2");
  manager_.RemoveAgent("a2", 5);  // no restart left
  manager_.Schedule();
  EXPECT_EQ(task->state, "TERMINATED");
  EXPECT_EQ(task->failure_type, "AgentFailed");
  EXPECT_EQ(task->Summary().restarts, 1);
}

TEST_F(TaskManagerTest, RestartsAreRefusedOutsideTheirRange) {
  TaskSpec spec = Command(1);
  spec.max_restarts = -1;
  EXPECT_NE(Submit(spec, 1).status().message().find("max_restarts must be 0 to 1000, not -1"),
            std::string::npos);
}

// A spot interruption notice: the trial on the agent is preempted (it checkpoints and is queued
// again), the command runs on (it may finish before the machine goes), and the agent gets no new
// work.
TEST_F(TaskManagerTest, AnInterruptedAgentsTrialsArePreemptedAndItGetsNoNewWork) {
  Agent("a1", "default", {"s0", "s1"});
  auto trial = manager_.Submit(Command(1), 1, {"trial-7-1", "TRIAL", "experiment-7"});
  ASSERT_TRUE(trial.ok());
  auto command = Submit(Command(1), 1);
  ASSERT_EQ(listener_.starts.size(), 2u);
  constexpr int64_t kSecond = 1'000'000'000;
  const int64_t deadline = 120 * kSecond;  // EC2's two minutes from now (0)
  Result<int> preempted = manager_.AgentInterrupted("a1", "spot interruption", deadline, 0);
  ASSERT_TRUE(preempted.ok());
  EXPECT_EQ(*preempted, 1);
  EXPECT_EQ(manager_.Find("trial-7-1")->message, "spot interruption");
  EXPECT_TRUE(manager_.Find("trial-7-1")->Summary().preempting) << "told through its signal";
  EXPECT_TRUE(listener_.kills.empty()) << "no SIGTERM while the run may stop by itself";
  manager_.SendDueStops(deadline - 16 * kSecond);
  EXPECT_TRUE(listener_.kills.empty());
  manager_.SendDueStops(deadline - 15 * kSecond);  // not stopped by then: SIGTERM, then SIGKILL
  ASSERT_EQ(listener_.kills.size(), 1u);
  EXPECT_EQ(listener_.kills[0].second.allocation_id, "trial-7-1.1");
  EXPECT_EQ(listener_.kills[0].second.grace_ms, 10000);
  Report("a1", "trial-7-1.1", bus::kWorkloadTerminated, 0);
  EXPECT_EQ(manager_.Find("trial-7-1")->state, "QUEUED") << "not placed back on a1";
  EXPECT_EQ(manager_.Find(*command)->state, "ASSIGNED");
  EXPECT_EQ(listener_.starts.size(), 2u);
  EXPECT_FALSE(manager_.AgentInterrupted("nope", "x", 1, 0).ok());
}

// A run that stops by itself when told is queued again and never sent the deferred SIGTERM.
TEST_F(TaskManagerTest, ATrialThatStopsWhenToldGetsNoSigterm) {
  Agent("a1", "default", {"s0"});
  ASSERT_TRUE(manager_.Submit(Command(1), 1, {"trial-8-1", "TRIAL", "experiment-8"}).ok());
  manager_.Schedule();
  ASSERT_TRUE(manager_.AgentInterrupted("a1", "going", 30'000'000'000, 0).ok());
  Report("a1", "trial-8-1.1", bus::kWorkloadTerminated, 0);
  EXPECT_EQ(manager_.Find("trial-8-1")->state, "QUEUED");
  manager_.SendDueStops(29'000'000'000);
  EXPECT_TRUE(listener_.kills.empty());
}

TEST_F(TaskManagerTest, UnschedulableAgentGetsNoNewWork) {
  Agent("a1", "default", {"s0"});
  manager_.SetAgentSchedulable("a1", false);
  manager_.Schedule();
  ASSERT_TRUE(Submit(Command(1), 1).ok());
  EXPECT_TRUE(listener_.starts.empty());
  manager_.SetAgentSchedulable("a1", true);
  manager_.Schedule();
  EXPECT_EQ(listener_.starts.size(), 1u);
}

TEST_F(TaskManagerTest, BadSpecsAreRefusedWithTheReason) {
  auto empty = Submit(Command(1), 1);
  empty = Submit(
      [] {
        TaskSpec spec = Command(1);
        spec.entrypoint = {};
        return spec;
      }(),
      1);
  EXPECT_EQ(empty.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(empty.status().message().find("entrypoint"), std::string::npos);
  auto negative = Submit(Command(-1), 1);
  EXPECT_NE(negative.status().message().find("-1"), std::string::npos);
}

TEST_F(TaskManagerTest, ListIsInSubmissionOrder) {
  auto a = Submit(Command(1), 1);
  auto b = Submit(Command(1), 2);
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
  Agent("a1", "default", {"s0", "s1"});
  auto running = Submit(Command(1), 1);
  ASSERT_TRUE(manager_.SetAgentEnabled("a1", false, /*drain=*/true).ok());
  manager_.Schedule();
  EXPECT_TRUE(listener_.kills.empty());
  EXPECT_TRUE(manager_.Usage("a1").draining);
  ASSERT_TRUE(Submit(Command(1), 2).ok());
  EXPECT_EQ(listener_.starts.size(), 1u);

  ASSERT_TRUE(manager_.SetAgentEnabled("a1", false, /*drain=*/false).ok());
  manager_.Schedule();
  ASSERT_EQ(listener_.kills.size(), 1u);
  EXPECT_EQ(listener_.kills[0].second.allocation_id, manager_.Find(*running)->allocation_id);
  EXPECT_FALSE(manager_.Usage("a1").draining);

  ASSERT_TRUE(manager_.SetAgentEnabled("a1", true, false).ok());
  manager_.Schedule();
  EXPECT_EQ(listener_.starts.size(), 2u);
  EXPECT_EQ(manager_.SetAgentEnabled("zz", true, false).code(), StatusCode::kNotFound);
}

TEST_F(TaskManagerTest, DisabledSlotIsSkippedAndUnknownSlotsAreNamed) {
  Agent("a1", "default", {"s0", "s1"});
  ASSERT_TRUE(manager_.SetSlotEnabled("a1", "s0", false).ok());
  manager_.Schedule();
  ASSERT_TRUE(Submit(Command(1), 1).ok());
  ASSERT_TRUE(Submit(Command(1), 2).ok());
  ASSERT_EQ(listener_.starts.size(), 1u);
  EXPECT_EQ(listener_.starts[0].second.slot_ids, std::vector<std::string>{"s1"});
  EXPECT_EQ(manager_.Usage("a1").disabled_slots, std::vector<std::string>{"s0"});
  Status unknown = manager_.SetSlotEnabled("a1", "s9", false);
  EXPECT_NE(unknown.message().find("has no slot s9"), std::string::npos);
  ASSERT_TRUE(manager_.SetSlotEnabled("a1", "s0", true).ok());
  manager_.Schedule();
  EXPECT_EQ(listener_.starts.size(), 2u);
}

TEST_F(TaskManagerTest, RestoredTaskHoldsItsSlotsUntilItsAgentReportsIt) {
  Task restored;
  restored.id = "t1";
  restored.spec = Command(1);
  restored.allocation_id = "t1.1";
  restored.allocations = 1;
  restored.resources = {{"a1", {"s0"}, "RUNNING"}};
  restored.state = "RUNNING";
  manager_.Restore(restored);
  EXPECT_EQ(manager_.AwaitedAgents(), std::vector<std::string>{"a1"});
  Agent("a1", "default", {"s0"});
  ASSERT_TRUE(Submit(Command(1), 1).ok());
  EXPECT_TRUE(listener_.starts.empty());  // s0 is held by the restored task
  // The agent does not report it: it ended with the agent's restart.
  manager_.Reconcile("a1", {}, /*complete=*/true, 2);
  manager_.Schedule();
  EXPECT_EQ(manager_.Find("t1")->failure_type, "AgentFailed");
  EXPECT_EQ(listener_.starts.size(), 1u);
}

}  // namespace
}  // namespace det::master

namespace det::master {
namespace {

TEST_F(TaskManagerTest, ReconcileKillsWorkloadsNoTaskWantsAndResendsRequestedKills) {
  Agent("a1", "default", {"s0", "s1"});
  auto ended = Submit(Command(1), 1);
  ASSERT_TRUE(Submit(Command(1), 2).ok());  // also ends; its agent does not report it
  const std::string ended_allocation = manager_.Find(*ended)->allocation_id;
  manager_.RemoveAgent("a1", 3);  // both end with AgentFailed while the agent is away
  Agent("a1", "default", {"s0", "s1"});
  manager_.Reconcile(
      "a1",
      {State(ended_allocation, bus::kWorkloadRunning), State("stranger.1", bus::kWorkloadRunning)},
      /*complete=*/true, 4);
  ASSERT_EQ(listener_.kills.size(), 2u);
  EXPECT_EQ(listener_.kills[0].second.allocation_id, ended_allocation);
  EXPECT_EQ(listener_.kills[0].second.grace_ms, 0);
  EXPECT_EQ(listener_.kills[1].second.allocation_id, "stranger.1");
}

TEST_F(TaskManagerTest, KillOfAnAssignedTaskWhoseStartWasLostEndsItOnReconcile) {
  Agent("a1", "default", {"s0"});
  auto id = Submit(Command(1), 1);
  ASSERT_TRUE(manager_.Kill(*id, 2).ok());
  manager_.Schedule();
  manager_.Reconcile("a1", {}, /*complete=*/true, 3);
  manager_.Schedule();
  EXPECT_EQ(manager_.Find(*id)->state, "TERMINATED");
  EXPECT_EQ(manager_.Find(*id)->failure_type, "Killed");
  EXPECT_EQ(listener_.starts.size(), 1u);  // not started again
}

}  // namespace
}  // namespace det::master

namespace det::master {
namespace {

TaskSpec Prioritized(int priority, bool preemptible, int slots = 1) {
  TaskSpec spec = Command(slots);
  spec.priority = priority;
  spec.preemptible = preemptible;
  return spec;
}

TEST_F(TaskManagerTest, PreemptedTaskIsQueuedAgainAndResumesAsANewAllocation) {
  Agent("a1", "default", {"s0"});
  auto low = Submit(Prioritized(50, true), 1);
  Report("a1", *low + ".1", bus::kWorkloadRunning);
  auto urgent = Submit(Prioritized(10, false), 2);
  ASSERT_EQ(listener_.kills.size(), 1u);
  EXPECT_EQ(listener_.kills[0].second.allocation_id, *low + ".1");
  EXPECT_EQ(listener_.kills[0].second.grace_ms, 5000);  // the pool's preemption_timeout
  EXPECT_TRUE(manager_.Find(*low)->preempting);
  EXPECT_EQ(manager_.Find(*urgent)->state, "QUEUED");

  Report("a1", *low + ".1", bus::kWorkloadTerminated, 143, "TaskError");
  EXPECT_EQ(manager_.Find(*low)->state, "QUEUED");  // back in the queue, not failed
  EXPECT_EQ(manager_.Find(*low)->message, "preempted; queued again");
  ASSERT_TRUE(manager_.Find(*low)->last_end.has_value());
  EXPECT_EQ(manager_.Find(*low)->last_end->exit_code, 143);
  EXPECT_EQ(manager_.Find(*urgent)->state, "ASSIGNED");

  Report("a1", *urgent + ".1", bus::kWorkloadTerminated, 0);
  ASSERT_EQ(listener_.starts.size(), 3u);
  EXPECT_EQ(listener_.starts[2].second.allocation_id, *low + ".2");
  Report("a1", *low + ".2", bus::kWorkloadTerminated, 0);
  EXPECT_EQ(manager_.Find(*low)->state, "TERMINATED");
  EXPECT_EQ(manager_.Find(*low)->failure_type, "");
  EXPECT_EQ(manager_.Find(*low)->allocations, 2);
  EXPECT_EQ(manager_.Find(*low)->message, "");  // the preemption is not how it ended
}

TEST_F(TaskManagerTest, AKillDuringPreemptionEndsTheTaskInsteadOfQueueingIt) {
  Agent("a1", "default", {"s0"});
  auto low = Submit(Prioritized(50, true), 1);
  ASSERT_TRUE(Submit(Prioritized(10, false), 2).ok());
  ASSERT_TRUE(manager_.Kill(*low, 3).ok());
  Report("a1", *low + ".1", bus::kWorkloadTerminated, 143, "TaskError");
  EXPECT_EQ(manager_.Find(*low)->state, "TERMINATED");
  EXPECT_EQ(manager_.Find(*low)->failure_type, "Killed");
}

TEST_F(TaskManagerTest, AGangRunsOnSeveralAgentsAndOnePartFailingStopsTheOthers) {
  Agent("g1", "gpus", {"0", "1"});
  Agent("g2", "gpus", {"0", "1"});
  TaskSpec spec = Command(4, "gpus");
  spec.single_node = false;
  auto id = Submit(spec, 1);
  ASSERT_EQ(listener_.starts.size(), 2u);
  EXPECT_EQ(manager_.Find(*id)->Agents(), (std::vector<std::string>{"g1", "g2"}));
  EXPECT_EQ(listener_.starts[1].second.slot_ids, (std::vector<std::string>{"0", "1"}));
  Report("g1", *id + ".1", bus::kWorkloadRunning);
  EXPECT_EQ(manager_.Find(*id)->state, "ASSIGNED");  // as far as its least advanced part
  Report("g2", *id + ".1", bus::kWorkloadRunning);
  EXPECT_EQ(manager_.Find(*id)->state, "RUNNING");

  Report("g1", *id + ".1", bus::kWorkloadTerminated, 1, "TaskError");
  ASSERT_EQ(listener_.kills.size(), 1u);
  EXPECT_EQ(listener_.kills[0].first, "g2");
  EXPECT_EQ(manager_.Find(*id)->state, "RUNNING");
  Report("g2", *id + ".1", bus::kWorkloadTerminated, 143, "TaskError");
  EXPECT_EQ(manager_.Find(*id)->state, "TERMINATED");
  EXPECT_EQ(manager_.Find(*id)->exit_code, 1);  // the part that failed first
  EXPECT_EQ(manager_.Usage("g1").used_slots + manager_.Usage("g2").used_slots, 0u);
}

TEST_F(TaskManagerTest, SubmitRefusesUnknownPoolsAndRequestsThatCanNeverFit) {
  Agent("a1", "default", {"s0", "s1"});
  auto unknown = Submit(Command(1, "tpus"), 1);
  EXPECT_EQ(unknown.status().message(),
            "resource pool \"tpus\" is not configured; pools: default, gpus");
  auto huge = Submit(Command(3), 1);
  EXPECT_EQ(huge.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(huge.status().message().find("asks for 3 slots"), std::string::npos);
  auto urgent = Submit(Prioritized(0, false), 1);
  EXPECT_NE(urgent.status().message().find("priority must be 1"), std::string::npos);
}

TEST_F(TaskManagerTest, ZeroSlotTasksRunBesideBusySlotsAndAreCountedApart) {
  Agent("a1", "default", {"s0"});
  ASSERT_TRUE(Submit(Command(1), 1).ok());
  TaskSpec aux = Command(0, "");
  auto id = Submit(aux, 2);
  EXPECT_EQ(manager_.Find(*id)->state, "ASSIGNED");
  EXPECT_EQ(manager_.Find(*id)->spec.resource_pool, "default");  // the aux pool
  EXPECT_EQ(manager_.Usage("a1").aux_tasks, 1u);
  EXPECT_EQ(manager_.Usage("a1").used_slots, 1u);
  Report("a1", *id + ".1", bus::kWorkloadTerminated, 0);
  EXPECT_EQ(manager_.Usage("a1").aux_tasks, 0u);
}

TEST_F(TaskManagerTest, TheJobQueueShowsOrderStatesAndTakesUpdates) {
  auto a = Submit(Command(1), 1);
  auto b = Submit(Command(1), 2);
  auto c = Submit(Prioritized(10, false), 3);
  auto jobs = manager_.Jobs();
  ASSERT_EQ(jobs.size(), 3u);
  EXPECT_EQ(jobs[0].job_id, *c);
  EXPECT_EQ(jobs[2].job_id, *b);
  EXPECT_EQ(jobs[2].jobs_ahead, 2);
  EXPECT_EQ(jobs[2].state, "QUEUED");

  Agent("a1", "default", {"s0"});
  EXPECT_EQ(manager_.Jobs()[0].state, "SCHEDULED");
  EXPECT_EQ(manager_.Jobs()[0].allocated_slots, 1);

  auto moved = manager_.UpdateJob({*b, 5, std::nullopt, std::nullopt});
  ASSERT_TRUE(moved.ok()) << moved.status().ToString();
  EXPECT_EQ(moved->jobs_ahead, 0);
  EXPECT_EQ(moved->priority, 5);
  EXPECT_EQ(listener_.settings, std::vector<std::string>{*b});
  EXPECT_EQ(manager_.UpdateJob({*c, std::nullopt, std::nullopt, "gpus"}).status().code(),
            StatusCode::kFailedPrecondition);
  auto repooled = manager_.UpdateJob({*a, std::nullopt, 2.0, "gpus"});
  ASSERT_TRUE(repooled.ok());
  EXPECT_EQ(repooled->resource_pool, "gpus");
  EXPECT_EQ(repooled->weight, 2.0);
  EXPECT_EQ(manager_.UpdateJob({"nope", 5, std::nullopt, std::nullopt}).status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(manager_.UpdateJob({*b, 100, std::nullopt, std::nullopt}).status().code(),
            StatusCode::kInvalidArgument);
}

TEST_F(TaskManagerTest, PendingDemandIsReportedWhenItChanges) {
  ASSERT_TRUE(Submit(Command(1), 1).ok());
  ASSERT_TRUE(Submit(Command(2), 2).ok());
  ASSERT_FALSE(listener_.pending.empty());
  EXPECT_EQ(listener_.pending.back(), (bus::ClusterPending{"default", 3, 0, 2, 2}));
  const size_t reports = listener_.pending.size();
  manager_.Schedule();  // nothing changed: nothing reported
  EXPECT_EQ(listener_.pending.size(), reports);
  Agent("a1", "default", {"s0", "s1", "s2"});
  EXPECT_EQ(listener_.pending.back(), (bus::ClusterPending{"default", 0, 0, 0, 0}));
}

}  // namespace
}  // namespace det::master
