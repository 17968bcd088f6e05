// Workloads end to end: real det-master, det-agent and det CLI processes running commands.
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "tests/testing/cluster_fixture.h"

namespace det {
namespace {

using testing::ClusterProcessTest;
using testing::Process;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

class WorkloadProcessTest : public ClusterProcessTest {
 protected:
  std::string ExtraBusConfig() const override { return "  agent_reconnect_wait: 3s\n"; }

  void WaitForAgents(int n) {
    for (int i = 0; i < 100; ++i) {
      auto agents = nlohmann::json::parse(Det("--json agent list"), nullptr, false);
      if (agents.is_array() && static_cast<int>(agents.size()) == n) return;
      std::this_thread::sleep_for(100ms);
    }
    FAIL() << "agents did not join: " << Det("agent list");
  }
};

TEST_F(WorkloadProcessTest, FiftyCommandsOnThreeAgentsCompleteWithOrderedLogs) {
  auto a = StartAgent("agent-1", 2), b = StartAgent("agent-2", 2), c = StartAgent("agent-3", 2);
  WaitForAgents(3);
  // Each command waits for this file, made once all 50 are queued: whatever the pace of
  // submission, the tasks wait for slots and every agent's slots are filled.
  const fs::path go = dir_ / "go";
  std::vector<std::string> ids;
  for (int i = 0; i < 50; ++i) {
    ids.push_back(Run("while [ ! -e " + go.string() +
                      " ]; do sleep 0.05; done; for n in $(seq 1 20); do echo \"$DET_TASK_ID "
                      "$n\"; done; sleep 0.3; echo done >&2"));
    ASSERT_FALSE(ids.back().empty());
  }
  std::ofstream(go).put('\n');
  std::set<std::string> agents_used;
  for (const std::string& id : ids) {
    nlohmann::json summary = Wait(id);
    EXPECT_EQ(summary.value("failure_type", "?"), "") << summary.dump();
    EXPECT_EQ(summary.value("exit_code", -1), 0);
    for (const auto& agent : summary["agents"]) agents_used.insert(agent.get<std::string>());
    std::vector<std::string> texts = LogTexts(id);
    ASSERT_EQ(texts.size(), 21u) << id;
    for (int n = 1; n <= 20; ++n) EXPECT_EQ(texts[n - 1], id + " " + std::to_string(n));
    EXPECT_EQ(texts[20], "done");
  }
  EXPECT_EQ(agents_used.size(), 3u) << "with 50 tasks queued, every agent is filled";
}

// A workload gets the agent's basics (PATH, HOME, locale) and det's variables, never what else
// the agent's environment held (cloud credentials, det's own login), and cannot set det's own.
TEST_F(WorkloadProcessTest, WorkloadsInheritTheAgentsBasicsButNotItsSecrets) {
  setenv("AWS_SECRET_ACCESS_KEY", "agent-secret-4242", 1);
  setenv("DET_PASS", "agent-password-4242", 1);
  auto agent = StartAgent("agent-env");
  unsetenv("AWS_SECRET_ACCESS_KEY");
  unsetenv("DET_PASS");
  WaitForAgents(1);
  const std::string id = Run("env", "-e MODEL=linear");
  ASSERT_FALSE(id.empty());
  EXPECT_EQ(Wait(id).value("exit_code", -1), 0);
  std::string env;
  for (const std::string& line : LogTexts(id)) env += line + "\n";
  EXPECT_EQ(env.find("agent-secret-4242"), std::string::npos) << env;
  EXPECT_EQ(env.find("agent-password-4242"), std::string::npos) << env;
  for (const char* wanted : {"PATH=", "MODEL=linear", "DET_TASK_ID=", "DET_SESSION_TOKEN="}) {
    EXPECT_NE(env.find(wanted), std::string::npos) << wanted << " missing:\n" << env;
  }
  const std::string forged = Det("cmd run -e DET_SESSION_TOKEN=forged true");
  EXPECT_NE(forged.find("DET_SESSION_TOKEN is set by det"), std::string::npos) << forged;
}

// Inside a task DET_MASTER is the master's REST URL, as Determined's library and SDK expect it, and
// det works from there: given a URL it asks GET /api/v1/master for the gateway. So does -m.
TEST_F(WorkloadProcessTest, DetMasterIsTheRestUrlAndDetFindsTheGatewayFromIt) {
  auto agent = StartAgent("agent-url");
  WaitForAgents(1);
  const std::string id = Run("echo \"master=$DET_MASTER\"; " + testing::BuildDir() +
                             "/cli/det --plaintext master info");
  ASSERT_FALSE(id.empty());
  EXPECT_EQ(Wait(id).value("exit_code", -1), 0) << Det("task logs " + id);
  const std::string logs = Det("task logs " + id);
  EXPECT_NE(logs.find("master=http://"), std::string::npos) << logs;
  EXPECT_NE(logs.find(":" + rest_port_), std::string::npos) << logs;
  EXPECT_NE(logs.find("cluster id:"), std::string::npos) << logs;

  const std::string det = testing::BuildDir() + "/cli/det --plaintext -m ";
  const std::string by_url =
      testing::Shell(det + "http://127.0.0.1:" + rest_port_ + "/ master info 2>&1");
  EXPECT_NE(by_url.find("cluster id:"), std::string::npos) << by_url;
  // A URL with no master behind it is named, not waited on.
  const std::string nobody = testing::Shell(det + "http://127.0.0.1:1 master info 2>&1");
  EXPECT_NE(nobody.find("cannot reach the master at http://127.0.0.1:1"), std::string::npos)
      << nobody;
}

// Through the `cmd` commands (`task` ones answer the same for every kind of task).
TEST_F(WorkloadProcessTest, KillStopsARunningCommand) {
  auto agent = StartAgent("agent-k");
  WaitForAgents(1);
  const std::string id = Run("trap \"echo got TERM; exit 7\" TERM; echo ready; sleep 30 & wait");
  ASSERT_TRUE(WaitFor("cmd logs " + id, "ready"));
  EXPECT_NE(Det("cmd list").find(id), std::string::npos) << Det("cmd list");
  EXPECT_NE(Det("cmd kill " + id).find("kill requested"), std::string::npos);
  nlohmann::json summary = Wait(id);
  EXPECT_EQ(summary.value("failure_type", ""), "Killed") << summary.dump();
  EXPECT_EQ(summary.value("exit_code", 0), 7);
  EXPECT_NE(Det("cmd logs " + id).find("got TERM"), std::string::npos);
  EXPECT_NE(Det("task logs " + id).find("got TERM"), std::string::npos);
  auto listed = nlohmann::json::parse(Det("--json cmd list"), nullptr, false);
  ASSERT_TRUE(listed.is_array() && listed.size() == 1) << listed;
  EXPECT_EQ(listed[0].value("id", ""), id);
}

// `det cmd run --array`: one call, one task (and queue entry) per index, each told its index;
// listed and killed as a whole by the array's id, or one by one by "<array id>_<index>".
TEST_F(WorkloadProcessTest, AnArrayRunsATaskPerIndexListedAndKilledWholeOrOneByOne) {
  auto agent = StartAgent("agent-a", 2);
  WaitForAgents(1);
  auto reply = nlohmann::json::parse(
      Det("--json cmd run --array 1-3,7 'echo task $DET_ARRAY_INDEX of $DET_ARRAY_ID'"), nullptr,
      false);
  ASSERT_TRUE(reply.is_object()) << reply;
  const std::string array = reply.value("task_id", "");
  EXPECT_EQ(reply.value("array_size", 0), 4);
  for (int index : {1, 2, 3, 7}) {
    const std::string id = array + "_" + std::to_string(index);
    EXPECT_EQ(Wait(id).value("exit_code", -1), 0) << id;
    EXPECT_EQ(LogTexts(id),
              std::vector<std::string>{"task " + std::to_string(index) + " of " + array});
  }
  auto listed = nlohmann::json::parse(Det("--json cmd list --array " + array), nullptr, false);
  ASSERT_TRUE(listed.is_array() && listed.size() == 4) << listed;
  EXPECT_EQ(listed[3].value("array_index", 0), 7);
  EXPECT_EQ(listed[3].value("array_id", ""), array);

  const std::string refused = Det("cmd run --array 3-1 true");
  EXPECT_NE(refused.find("--array item \"3-1\": the range ends before it starts"),
            std::string::npos)
      << refused;

  // Two of four sleepers run on the two slots; one is killed alone, then the rest as a whole.
  auto sleepers =
      nlohmann::json::parse(Det("--json cmd run --array 0-3 'sleep 60'"), nullptr, false);
  const std::string second = sleepers.value("task_id", "");
  EXPECT_NE(Det("cmd kill " + second + "_3").find("is TERMINATED"), std::string::npos);
  EXPECT_NE(Det("cmd kill " + second).find("kill requested for 3 unfinished task(s)"),
            std::string::npos);
  for (int index = 0; index < 4; ++index) {
    EXPECT_EQ(Wait(second + "_" + std::to_string(index)).value("failure_type", ""), "Killed");
  }
}

TEST_F(WorkloadProcessTest, ProgramThatCannotStartFailsWithTheReason) {
  auto agent = StartAgent("agent-s");
  WaitForAgents(1);
  const std::string out = Det("--json cmd run /no/such/program arg");
  const std::string id = nlohmann::json::parse(out, nullptr, false).value("task_id", "");
  ASSERT_FALSE(id.empty()) << out;
  nlohmann::json summary = Wait(id);
  EXPECT_EQ(summary.value("failure_type", ""), "StartFailed") << summary.dump();
  EXPECT_NE(summary.value("message", "").find("/no/such/program"), std::string::npos);
}

TEST_F(WorkloadProcessTest, TasksOfAKilledAgentFailWithAgentFailedAfterTheWindow) {
  auto agent = StartAgent("agent-x");
  WaitForAgents(1);
  const std::string id = Run("echo running; exec sleep 30");
  ASSERT_TRUE(WaitFor("task logs " + id, "running"));
  agent->Stop(SIGKILL);
  nlohmann::json summary = Wait(id);
  EXPECT_EQ(summary.value("failure_type", ""), "AgentFailed") << summary.dump();
}

TEST_F(WorkloadProcessTest, AgentKilledAndRestartedWithinTheWindowAdoptsItsTasks) {
  auto agent = StartAgent("agent-r", 2);
  WaitForAgents(1);
  std::vector<std::string> ids;
  for (int i = 0; i < 2; ++i) {
    ids.push_back(Run("for n in $(seq 1 40); do echo \"line $n\"; sleep 0.05; done; exit 4"));
  }
  ASSERT_TRUE(WaitFor("task logs " + ids[1], "line 5"));
  agent->Stop(SIGKILL);
  agent = StartAgent("agent-r", 2);
  for (const std::string& id : ids) {
    nlohmann::json summary = Wait(id);
    EXPECT_EQ(summary.value("exit_code", 0), 4) << summary.dump() << Log("agent-r.log");
    EXPECT_EQ(summary.value("failure_type", ""), "TaskError");
    std::vector<std::string> texts = LogTexts(id);
    ASSERT_EQ(texts.size(), 40u) << id << "\n" << Det("task logs " + id);
    for (int n = 1; n <= 40; ++n) EXPECT_EQ(texts[n - 1], "line " + std::to_string(n));
  }
  EXPECT_NE(Log("agent-r.log").find("still running"), std::string::npos) << Log("agent-r.log");
}

TEST_F(WorkloadProcessTest, MasterKilledMidRunAndRestartedLosesNoTaskAndNoLogLine) {
  auto agent = StartAgent("agent-m", 4);
  WaitForAgents(1);
  std::vector<std::string> ids;
  for (int i = 0; i < 4; ++i) {
    ids.push_back(Run("for n in $(seq 1 40); do echo \"line $n\"; sleep 0.05; done"));
  }
  ASSERT_TRUE(WaitFor("task logs " + ids[0], "line 5"));
  RestartMaster();
  for (const std::string& id : ids) {
    nlohmann::json summary = Wait(id);
    EXPECT_EQ(summary.value("failure_type", "?"), "") << summary.dump() << Log("master2.log");
    std::vector<std::string> texts = LogTexts(id);
    ASSERT_EQ(texts.size(), 40u) << id << "\n" << Det("task logs " + id);
    for (int n = 1; n <= 40; ++n) EXPECT_EQ(texts[n - 1], "line " + std::to_string(n));
  }
  EXPECT_NE(Log("master2.log").find("resuming 4 unfinished tasks"), std::string::npos)
      << "the restarted master must have taken the tasks over: " << Log("master2.log");
}

// A submission is answered only once it is stored: a master killed the moment after it answered
// still has every task it acknowledged when it comes back. The array before the last command
// gives the store a backlog (2,000 rows), so an answer sent before its commit would be lost.
TEST_F(WorkloadProcessTest, EveryAcknowledgedSubmissionSurvivesAKillRightAfterItsAnswer) {
  const std::string env = "DET_USER=admin DET_PASS=" + std::string(testing::kAdminPassword) +
                          " DET_AUTH_FILE=" + (dir_ / "auth-admin.json").string();
  ASSERT_NE(Det("master info").find("version:"), std::string::npos);  // logged in before the race
  const std::string out =
      testing::Shell(DetCommand(env, "--json cmd run --array 1-2000 'sleep 600'") + "; " +
                     DetCommand(env, "--json cmd run 'sleep 600'") + "; kill -9 " +
                     std::to_string(master_->pid()));
  std::stringstream lines(out);
  std::string array_line, command_line;
  std::getline(lines, array_line);
  std::getline(lines, command_line);
  auto array = nlohmann::json::parse(array_line, nullptr, false);
  auto command = nlohmann::json::parse(command_line, nullptr, false);
  ASSERT_TRUE(array.is_object() && command.is_object()) << out;
  RestartMaster();
  auto found = nlohmann::json::parse(Det("--json task list"), nullptr, false);
  ASSERT_TRUE(found.is_array()) << Log("master2.log");
  std::set<std::string> ids;
  for (const auto& task : found) ids.insert(task.value("id", ""));
  EXPECT_TRUE(ids.count(command.value("task_id", ""))) << "the acknowledged command is lost";
  for (int index : {1, 1000, 2000}) {
    const std::string id = array.value("task_id", "") + "_" + std::to_string(index);
    EXPECT_TRUE(ids.count(id)) << "acknowledged array task " << id << " is lost";
  }
  EXPECT_EQ(ids.size(), 2001u) << Log("master2.log");
}

TEST_F(WorkloadProcessTest, BadRequestsAreRefusedWithTheReason) {
  EXPECT_NE(Det("cmd run ''").find("entrypoint is empty"), std::string::npos);
  EXPECT_NE(Det("cmd run --slots -2 true").find("slots must be 0 or more"), std::string::npos);
  EXPECT_NE(Det("cmd run -e NOEQUALS true").find("expected KEY=VALUE"), std::string::npos);
  EXPECT_NE(Det("task kill nope").find("task nope not found"), std::string::npos);
  EXPECT_NE(Det("task logs nope").find("not found"), std::string::npos);
}

}  // namespace
}  // namespace det
