// Operators' control of agents with real processes: disable (with and without drain), slots,
// resource pools, and agents that come back different.
#include <nlohmann/json.hpp>

#include "tests/testing/cluster_fixture.h"

namespace det {
namespace {

using testing::ClusterProcessTest;
using namespace std::chrono_literals;

class AgentControlTest : public ClusterProcessTest {
 protected:
  std::string ExtraBusConfig() const override { return "  agent_reconnect_wait: 5s\n"; }

  std::string Run(const std::string& entrypoint) {
    auto reply = nlohmann::json::parse(Det("--json cmd run '" + entrypoint + "'"), nullptr, false);
    return reply.is_object() ? reply.value("task_id", "") : "";
  }
  nlohmann::json Task(const std::string& id) {
    auto tasks = nlohmann::json::parse(Det("--json task list"), nullptr, false);
    if (tasks.is_array()) {
      for (const auto& t : tasks) {
        if (t.value("id", "") == id) return t;
      }
    }
    return nlohmann::json::object();
  }
  nlohmann::json Wait(const std::string& id) {
    return nlohmann::json::parse(Det("--json task wait " + id), nullptr, false);
  }
  void WaitConnected(const std::string& agent) {
    ASSERT_TRUE(WaitFor("--json agent list", "{\"id\":\"" + agent + "\",\"state\":\"connected\""))
        << Det("agent list") << Log(agent + ".log");
  }
};

TEST_F(AgentControlTest, DisableWithoutDrainKillsRunningTasksAndQueuesNewOnes) {
  auto agent = StartAgent("agent-k", 1);
  WaitConnected("agent-k");
  const std::string running = Run("echo up; exec sleep 30");
  ASSERT_TRUE(WaitFor("task logs " + running, "up"));
  EXPECT_NE(Det("agent disable agent-k").find("enabled no"), std::string::npos);
  nlohmann::json killed = Wait(running);
  EXPECT_EQ(killed.value("failure_type", ""), "Killed") << killed.dump();
  EXPECT_NE(killed.value("message", "").find("disabled"), std::string::npos) << killed.dump();

  const std::string queued = Run("true");
  std::this_thread::sleep_for(500ms);
  EXPECT_EQ(Task(queued).value("state", ""), "QUEUED");
  Det("agent enable agent-k");
  EXPECT_EQ(Wait(queued).value("failure_type", "?"), "");
}

TEST_F(AgentControlTest, DisableWithDrainLetsRunningTasksFinish) {
  auto agent = StartAgent("agent-d", 1);
  WaitConnected("agent-d");
  const std::string running = Run("echo up; sleep 1; echo finished");
  ASSERT_TRUE(WaitFor("task logs " + running, "up"));
  EXPECT_NE(Det("agent disable --drain agent-d").find("enabled draining"), std::string::npos);
  const std::string queued = Run("true");
  nlohmann::json finished = Wait(running);
  EXPECT_EQ(finished.value("failure_type", "?"), "") << finished.dump();
  EXPECT_NE(Det("task logs " + running).find("finished"), std::string::npos);
  EXPECT_EQ(Task(queued).value("state", ""), "QUEUED");
  EXPECT_NE(Det("agent list").find("no"), std::string::npos) << Det("agent list");
  Det("agent enable agent-d");
  EXPECT_EQ(Wait(queued).value("failure_type", "?"), "");
}

TEST_F(AgentControlTest, DisabledSlotGetsNoNewWork) {
  auto agent = StartAgent("agent-s", 2);
  WaitConnected("agent-s");
  EXPECT_NE(Det("slot disable agent-s cpu0").find("1 disabled"), std::string::npos);
  for (int i = 0; i < 3; ++i) {
    const std::string id = Run("echo $DET_SLOT_IDS");
    EXPECT_EQ(Wait(id).value("failure_type", "?"), "");
    EXPECT_NE(Det("task logs " + id).find("cpu1"), std::string::npos) << Det("task logs " + id);
  }
  EXPECT_NE(Det("slot disable agent-s cpu9").find("has no slot cpu9"), std::string::npos);
  EXPECT_NE(Det("agent disable nope").find("agent nope not found"), std::string::npos);
}

TEST_F(AgentControlTest, AgentOfAnUnknownPoolIsToldWhichPoolsExistAndStops) {
  auto agent = StartAgent("agent-p", 1, "gpus");
  ASSERT_TRUE(WaitForLog("agent-p.log", "told this agent to shut down"));
  EXPECT_NE(Log("agent-p.log")
                .find("resource pool \"gpus\" is not configured; known pools: "
                      "default"),
            std::string::npos)
      << Log("agent-p.log");
  EXPECT_EQ(agent->Stop(), 4);
}

TEST_F(AgentControlTest, AgentThatComesBackWithOtherDevicesIsShutDown) {
  auto agent = StartAgent("agent-c", 2);
  WaitConnected("agent-c");
  agent->Stop(SIGKILL);
  agent = StartAgent("agent-c", 3);  // within the reconnect window, with another slot
  ASSERT_TRUE(WaitForLog("agent-c.log", "told this agent to shut down"));
  EXPECT_NE(Log("agent-c.log").find("came back with other devices"), std::string::npos);
  EXPECT_EQ(agent->Stop(), 4);
}

}  // namespace
}  // namespace det
