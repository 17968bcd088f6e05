// The autoscaler end to end with the local provider: the real det-master, det-autoscaler and the
// det-agent processes it starts, the det CLI and the example experiment.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "common/clock.h"
#include "tests/testing/autoscaler_fixture.h"
#include "tests/testing/rest_client.h"
#include "tests/testing/test_util.h"

namespace det {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

class AutoscalerProcessTest : public testing::AutoscalerFixture {
 protected:
  // The agent program the provider starts (a test may slow it down).
  virtual std::string AgentBinary() const { return testing::BuildDir() + "/agent/det-agent"; }

  std::string ExtraConfig() const override {
    return "resource_pools:\n"
           "  - pool_name: default\n"
           "    provider:\n"
           "      type: local\n"
           "      instance_slots: 1\n"
           "      max_instances: 2\n"
           "      max_idle_agent_period: 2s\n"
           "      agent_binary: " +
           AgentBinary() +
           "\n"
           "      agent_args: [--artificial-slots, '1', --plaintext]\n"
           "      work_dir: " +
           (dir_ / "instances").string() + "\n";
  }
  void TearDown() override {
    autoscaler_.reset();
    for (pid_t pid : InstanceProcesses()) kill(-pid, SIGKILL);
    ClusterProcessTest::TearDown();
  }
  // The instances (session leaders tagged by the local provider) under this test's folder.
  std::set<pid_t> InstanceProcesses() const {
    std::set<pid_t> pids;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator("/proc", ec)) {
      const std::string env = testing::ReadProcFile(entry.path() / "environ");
      const std::string args = testing::ReadProcFile(entry.path() / "cmdline");
      if (env.find("DET_INSTANCE_ID=") == std::string::npos ||
          args.find((dir_ / "instances").string()) == std::string::npos) {
        continue;
      }
      const pid_t pid = std::stoi(entry.path().filename());
      if (getsid(pid) == pid) pids.insert(pid);
    }
    return pids;
  }
};

// No agents; an experiment arrives; the autoscaler starts an agent within seconds, the trial
// runs, and once it is idle past max_idle_agent_period the agent is stopped: nothing is left.
TEST_F(AutoscalerProcessTest, ScalesUpForAnExperimentAndBackDownToNothing) {
  StartAutoscaler();
  ASSERT_TRUE(WaitForLog("autoscaler.log", "pool default: local provider, 0..2 instances"))
      << Log("autoscaler.log");
  EXPECT_TRUE(InstanceProcesses().empty());

  const int64_t id = Create(Config("const.yaml"));
  ASSERT_GT(id, 0);
  ASSERT_TRUE(testing::Eventually(
      [&] { return Det("agent list").find("local-default-") != std::string::npos; }, 15s))
      << Log("autoscaler.log");
  EXPECT_EQ(WaitEnded(id), "COMPLETED") << Log("master.log");
  EXPECT_EQ(CountInLog("autoscaler.log", "pool default: launched 1 of 1"), 1u)
      << Log("autoscaler.log");

  EXPECT_TRUE(testing::Eventually([&] { return InstanceProcesses().empty(); }, 30s))
      << Log("autoscaler.log");
  EXPECT_NE(Log("autoscaler.log").find("idle for more than max_idle_agent_period (2s)"),
            std::string::npos);
  // The stopped agent said it was leaving: the master forgot it at once, not after the reconnect
  // window (25 s).
  EXPECT_TRUE(testing::Eventually(
      [&] { return Det("agent list").find("local-default-") == std::string::npos; }, 5s))
      << Det("agent list");

  // What the autoscaler did, as the master stored it.
  EXPECT_TRUE(testing::Eventually(
      [&] {
        return Det("autoscaler decisions").find("idle for more than max_idle_agent_period") !=
               std::string::npos;
      },
      5s))
      << Det("autoscaler decisions");
  auto decisions = nlohmann::json::parse(Det("--json autoscaler decisions"), nullptr, false);
  ASSERT_TRUE(decisions.is_array() && decisions.size() == 2) << decisions.dump();
  EXPECT_EQ(decisions[1].value("launch_reason", ""),
            "1 pending slots need 1 instance(s); 0 starting");
  EXPECT_EQ(decisions[1]["launched"].size(), 1u);
  EXPECT_EQ(decisions[0]["terminated"][0].value("id", ""), decisions[1]["launched"][0]);
  // Stopping until the provider's list no longer shows it (within a list interval, 5 s).
  nlohmann::json instances;
  EXPECT_TRUE(testing::Eventually(
      [&] {
        instances = nlohmann::json::parse(Det("--json autoscaler instances --all"), nullptr, false);
        return instances.is_array() && instances.size() == 1 &&
               instances[0].value("state", "") == "terminated";
      },
      15s))
      << instances.dump();
  ASSERT_TRUE(instances.is_array() && instances.size() == 1) << instances.dump();
  EXPECT_EQ(instances[0].value("state", ""), "terminated");
  EXPECT_EQ(instances[0].value("provider", ""), "local");
  EXPECT_GT(instances[0].value("terminated_at", int64_t{0}), 0);
  EXPECT_EQ(Det("--json autoscaler instances"), "[]\n");
  const std::string csv = Det("--csv autoscaler instances --all");
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "id,resource_pool,provider,instance_type,zone,spot,state,agent,launched_at,"
            "terminated_at")
      << csv;
  EXPECT_NE(csv.find(",local,local,localhost,false,terminated,"), std::string::npos) << csv;

  // The same through the REST API.
  testing::RestClient rest(std::stoi(rest_port_));
  const std::string token = rest.Login("admin", testing::kAdminPassword);
  testing::RestAnswer listed = rest.Send("GET", "/api/v1/autoscaler/decisions?limit=1", token);
  ASSERT_EQ(listed.body["decisions"].size(), 1u) << listed.text;
  EXPECT_EQ(listed.body["decisions"][0]["terminated"], decisions[0]["terminated"]);
  EXPECT_EQ(listed.body["decisions"][0]["resourcePool"], "default");
  EXPECT_EQ(rest.Send("GET", "/api/v1/autoscaler/decisions?limit=0", token).status, 400);
  listed = rest.Send("GET", "/api/v1/autoscaler/instances?all=true&resourcePool=default", token);
  ASSERT_EQ(listed.body["instances"].size(), instances.size()) << listed.text;
  for (size_t i = 0; i < instances.size(); ++i) {  // det's records, in the API's shape
    const nlohmann::json& shown = listed.body["instances"][i];
    EXPECT_EQ(shown["id"], instances[i]["id"]);
    EXPECT_EQ(shown["resourcePool"], instances[i]["resource_pool"]);
    EXPECT_EQ(shown["instanceType"], instances[i]["instance_type"]);
    EXPECT_EQ(shown["state"], instances[i]["state"]);
    EXPECT_EQ(ParseRfc3339Utc(shown.value("launchedAt", "")).value_or(0),
              instances[i]["launched_at"].get<int64_t>() / 1000 * 1000)
        << shown.dump();
    EXPECT_EQ(shown.contains("terminatedAt"), instances[i]["terminated_at"] != 0);
  }
  EXPECT_EQ(rest.Send("GET", "/api/v1/autoscaler/instances?resourcePool=nowhere", token)
                .body["instances"]
                .size(),
            0u);
  const std::string metrics = rest.Send("GET", "/metrics", token).text;
  EXPECT_NE(metrics.find(R"(det_autoscaler_launched_total{pool="default"} 1)"), std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find(R"(det_autoscaler_terminated_total{pool="default"} 1)"),
            std::string::npos);

  // det autoscaler status: the pool, its limits, its instances, the latest decision.
  const std::string status = Det("autoscaler status");
  EXPECT_NE(status.find("default"), std::string::npos) << status;
  EXPECT_NE(status.find("local"), std::string::npos) << status;
  EXPECT_NE(status.find("terminate local-default-"), std::string::npos) << status;
}

// An agent that takes its time to start (the instance boots), so a restart lands mid-scale-up.
class SlowAgentAutoscalerTest : public AutoscalerProcessTest {
 protected:
  std::string AgentBinary() const override { return (dir_ / "slow-agent.sh").string(); }
  void SetUp() override {
    AutoscalerProcessTest::SetUp();
    std::ofstream(dir_ / "slow-agent.sh")
        << "#!/bin/sh\nsleep 4\nexec " << testing::BuildDir() << "/agent/det-agent \"$@\"\n";
    fs::permissions(dir_ / "slow-agent.sh", fs::perms::owner_all);
  }
};

// Killed (-9) right after it launched two instances, whose agents have not connected yet, a
// restarted autoscaler finds both by their tags and launches no third.
TEST_F(SlowAgentAutoscalerTest, KilledMidScaleUpAndRestartedLaunchesNoDuplicate) {
  StartAutoscaler();
  ASSERT_TRUE(WaitForLog("autoscaler.log", "pool default: local provider"))
      << Log("autoscaler.log");
  const std::string first = Run("sleep 1", "--slots 1");
  const std::string second = Run("sleep 1", "--slots 1");
  ASSERT_TRUE(testing::Eventually([&] { return InstanceProcesses().size() == 2; }, 10s))
      << Log("autoscaler.log");
  autoscaler_->Stop(SIGKILL);

  StartAutoscaler("autoscaler2.log");
  ASSERT_TRUE(WaitForLog("autoscaler2.log", "2 instance(s) found at start"))
      << Log("autoscaler2.log");
  EXPECT_EQ(Wait(first).value("exit_code", -1), 0);
  EXPECT_EQ(Wait(second).value("exit_code", -1), 0);
  EXPECT_EQ(CountInLog("autoscaler2.log", "launched"), 0u) << Log("autoscaler2.log");
  EXPECT_EQ(InstanceProcesses().size() + CountInLog("autoscaler2.log", "terminating"), 2u);
}

}  // namespace
}  // namespace det
