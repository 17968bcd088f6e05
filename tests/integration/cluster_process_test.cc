// The real binaries on loopback: det-master, det-agent and the det CLI, as separate processes.
#include "storage/agents_repo.h"
#include "tests/testing/cluster_fixture.h"

namespace det {
namespace {

using testing::BuildDir;
using testing::ClusterProcessTest;
using testing::Process;
using testing::Shell;
using namespace std::chrono_literals;

TEST_F(ClusterProcessTest, AgentJoinsAndTheCliSeesIt) {
  auto agent = StartAgent("agent-a");
  ASSERT_TRUE(WaitFor("--json agent list", R"({"id":"agent-a","state":"connected")"))
      << Det("agent list") << Log("agent-a.log");
  EXPECT_NE(Det("master info").find("version:"), std::string::npos);
}

TEST_F(ClusterProcessTest, KilledAgentIsReportedLost) {
  auto agent = StartAgent("agent-b");
  ASSERT_TRUE(WaitFor("--json agent list", R"("state":"connected")"));
  agent->Stop(SIGKILL);
  EXPECT_TRUE(WaitFor("--json agent list", R"({"id":"agent-b","state":"lost")"))
      << Det("agent list");
  // The database has the agent's state and the connection that ended.
  std::vector<storage::AgentConnectionRecord> history;
  for (int i = 0; i < 50 && (history.empty() || !history[0].disconnected_at_ns); ++i) {
    std::this_thread::sleep_for(100ms);
    history = testing::InTransaction(
        db_, [](pqxx::work& tx) { return storage::AgentConnectionHistory(tx, "agent-b", 10); });
  }
  ASSERT_EQ(history.size(), 1u);
  EXPECT_EQ(history[0].reason, "lost");
  EXPECT_EQ(testing::InTransaction(
                db_, [](pqxx::work& tx) { return storage::FindAgent(tx, "agent-b")->state; }),
            "lost");
}

TEST_F(ClusterProcessTest, AgentSurvivesAMasterRestart) {
  auto agent = StartAgent("agent-c");
  ASSERT_TRUE(WaitFor("--json agent list", R"("state":"connected")"));
  const std::string info = Det("--json master info");
  const size_t at = info.find("\"cluster_id\":\"");
  ASSERT_NE(at, std::string::npos) << info;
  const std::string cluster_id = info.substr(at, info.find(',', at) - at);
  RestartMaster();
  EXPECT_TRUE(WaitFor("--json agent list", R"({"id":"agent-c","state":"connected")"))
      << Det("agent list") << Log("master2.log") << Log("agent-c.log");
  EXPECT_NE(Det("--json master info").find(cluster_id), std::string::npos)
      << "the cluster id must survive a restart: " << cluster_id;
}

TEST_F(ClusterProcessTest, CliWithoutMasterFailsClearly) {
  std::string out =
      Shell(BuildDir() + "/cli/det --plaintext -m tcp://127.0.0.1:1 master info 2>&1; echo rc=$?");
  EXPECT_NE(out.find("no reply from tcp://127.0.0.1:1"), std::string::npos) << out;
  EXPECT_NE(out.find("rc=3"), std::string::npos) << out;
}

TEST_F(ClusterProcessTest, BadConfigIsRefusedNamingTheField) {
  std::ofstream(dir_ / "bad.yaml") << "bus:\n  agent_port: seventy\n";
  std::string out = Shell(BuildDir() + "/master/det-master -c " + (dir_ / "bad.yaml").string() +
                          " 2>&1; echo rc=$?");
  EXPECT_NE(out.find("bus.agent_port: \"seventy\" is not an integer"), std::string::npos) << out;
  EXPECT_NE(out.find("rc=2"), std::string::npos) << out;
}

}  // namespace
}  // namespace det
