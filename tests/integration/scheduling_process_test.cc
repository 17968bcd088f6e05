// Scheduling end to end: real det-master, det-agent and det CLI processes; priorities,
// preemption and the job queue.
#include <nlohmann/json.hpp>

#include "tests/testing/cluster_fixture.h"

namespace det {
namespace {

using testing::ClusterProcessTest;
using namespace std::chrono_literals;

class SchedulingProcessTest : public ClusterProcessTest {
 protected:
  std::string ExtraConfig() const override {
    return "resource_manager:\n  scheduler: {type: priority, preemption: true}\n"
           "task_container_defaults: {preemption_timeout: 20}\n";
  }

  // A preemptible job that counts to 30, keeping its count in a checkpoint file: on SIGTERM (the
  // preemption signal) it saves the count and exits; started again, it resumes from it.
  std::string ResumableCounter() const {
    const std::string ck = (dir_ / "counter.ck").string();
    return "n=$(cat " + ck +
           " 2>/dev/null || echo 0); echo resumed from $n; "
           "save() { echo $n > " +
           ck +
           "; echo checkpoint $n; exit 0; }; trap save TERM; "
           "while [ $n -lt 30 ]; do n=$((n+1)); echo step $n; sleep 0.1; done; echo done $n";
  }

  std::string TaskField(const std::string& id, const std::string& field) {
    auto task = nlohmann::json::parse(Det("--json task list"), nullptr, false);
    if (!task.is_array()) return "";
    for (const auto& t : task) {
      if (t.value("id", "") == id) return t[field].dump();
    }
    return "";
  }
};

TEST_F(SchedulingProcessTest, AnUrgentJobPreemptsALowOneWhichResumesAndCompletes) {
  auto agent = StartAgent("agent-1", 1);
  const std::string low = Run(ResumableCounter(), "--priority 60 --preemptible");
  ASSERT_FALSE(low.empty());
  ASSERT_TRUE(WaitFor("task logs " + low, "step 5")) << Det("task list");

  const std::string urgent = Run("sleep 1; echo urgent work", "--priority 10");
  ASSERT_FALSE(urgent.empty());
  auto jobs = nlohmann::json::parse(Det("--json job list"), nullptr, false);
  ASSERT_TRUE(jobs.is_array() && jobs.size() == 2u) << jobs.dump();
  EXPECT_EQ(jobs[0]["job_id"], urgent);  // ahead of the running low-priority job
  EXPECT_EQ(jobs[1]["jobs_ahead"], 1);

  nlohmann::json urgent_end = Wait(urgent);
  EXPECT_EQ(urgent_end.value("failure_type", "?"), "");
  nlohmann::json low_end = Wait(low);
  EXPECT_EQ(low_end.value("failure_type", "?"), "") << low_end.dump();
  EXPECT_EQ(low_end.value("allocations", 0), 2) << "preempted once, then resumed";
  EXPECT_LT(urgent_end.value("ended_at", int64_t{0}), low_end.value("ended_at", int64_t{0}));

  const std::vector<std::string> texts = LogTexts(low);
  auto has = [&](const std::string& prefix) {
    return std::any_of(texts.begin(), texts.end(),
                       [&](const std::string& t) { return t.rfind(prefix, 0) == 0; });
  };
  EXPECT_TRUE(has("checkpoint ")) << "stopped by the preemption signal";
  EXPECT_TRUE(has("resumed from 0"));
  const auto resumed = std::count_if(texts.begin(), texts.end(), [](const std::string& t) {
    return t.rfind("resumed from ", 0) == 0 && t != "resumed from 0";
  });
  EXPECT_EQ(resumed, 1) << "the second run starts from the checkpoint";
  EXPECT_EQ(texts.back(), "done 30");
}

TEST_F(SchedulingProcessTest, RequestsThatCanNeverFitAreRefusedAndQueuedJobsCanBeUpdated) {
  auto agent = StartAgent("agent-1", 2);
  ASSERT_TRUE(WaitFor("agent list", "agent-1"));
  EXPECT_NE(Det("cmd run --slots 3 true").find("asks for 3 slots"), std::string::npos);
  EXPECT_NE(Det("cmd run --resource-pool gpus true").find("\"gpus\" is not configured"),
            std::string::npos);

  const std::string blocker = Run("sleep 30", "--slots 2");
  const std::string queued = Run("true", "--priority 50");
  ASSERT_TRUE(WaitFor("task list", "RUNNING"));
  const std::string updated = Det("--json job update " + queued + " --priority 20 --weight 3");
  auto job = nlohmann::json::parse(updated, nullptr, false);
  ASSERT_TRUE(job.is_object()) << updated;
  EXPECT_EQ(job["priority"], 20);
  EXPECT_EQ(job["weight"], 3.0);
  EXPECT_EQ(job["state"], "QUEUED");
  EXPECT_NE(Det("job update " + blocker + " --resource-pool default")
                .find("only while it is "
                      "queued"),
            std::string::npos);
  EXPECT_NE(Det("job update nope --priority 3").find("not found"), std::string::npos);
  EXPECT_EQ(TaskField(queued, "priority"), "20");
  Det("task kill " + blocker);
  EXPECT_EQ(Wait(queued).value("failure_type", "?"), "");
}

}  // namespace
}  // namespace det

namespace det {
namespace {

// A pool with its own agent_reconnect_wait, far shorter than the master's.
class PoolReconnectWaitTest : public testing::ClusterProcessTest {
 protected:
  std::string ExtraBusConfig() const override { return "  agent_reconnect_wait: 10m\n"; }
  std::string ExtraConfig() const override {
    return "resource_pools:\n  - pool_name: default\n    agent_reconnect_wait: 1s\n";
  }
};

TEST_F(PoolReconnectWaitTest, ALostAgentsTasksFailAfterItsPoolsWindow) {
  auto agent = StartAgent("agent-1", 1);
  const std::string id = Run("sleep 60");
  ASSERT_TRUE(WaitFor("task list", "RUNNING"));
  agent->Stop(SIGKILL);
  // Silence limit 2 s, then the pool's 1 s (the master's own window is 10 minutes).
  EXPECT_TRUE(WaitFor("task list", "AgentFailed")) << Det("task list");
}

}  // namespace
}  // namespace det
