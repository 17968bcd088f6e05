// Faults on a cluster spread over hosts (multihost_fixture.h): each test runs the example
// experiment, injects one fault mid-trial, and ends with CheckNothingLost (the experiment
// completes, every metric is there once, nothing is left running) and a row of the fault report.
#include <signal.h>

#include <thread>

#include "tests/multihost/multihost_fixture.h"

namespace det::testing {
namespace {

using namespace std::chrono_literals;

constexpr TrialShape kShape{200, 20};
constexpr double kStepSeconds = 0.07;  // 14 s of training

class FaultTest : public MultiHostTest {
 protected:
  // Starts the experiment and waits until its trial is past `steps` batches on some host: the
  // host.
  std::string StartAndWaitForProgress(int64_t* experiment_id, int steps = 40) {
    *experiment_id = CreateExperiment(kShape, kStepSeconds);
    EXPECT_GT(*experiment_id, 0);
    auto trial = WaitForTrial(
        *experiment_id, [&](const auto& t) { return t.value("steps_completed", 0) >= steps; });
    EXPECT_FALSE(trial.is_null()) << "the trial made no progress: " << ReadLog("master.log");
    const std::string host = HostRunningTrial(*experiment_id);
    EXPECT_FALSE(host.empty());
    return host;
  }
  int Restarts(int64_t experiment_id) {
    return Describe(experiment_id)["trials"][0].value("restarts", -1);
  }
};

TEST_F(FaultTest, AgentKilledAndRestartedKeepsItsTrialRunning) {
  int64_t id = 0;
  const std::string host = StartAndWaitForProgress(&id);
  ASSERT_FALSE(host.empty());
  const ProgressMark fault = MarkProgress(id);
  agents_[host]->Stop(SIGKILL);
  // The trial goes on reporting while its agent is down...
  const double recovery = SecondsUntilProgress(fault, /*in_a_new_run=*/false);
  EXPECT_GT(recovery, 0);
  EXPECT_EQ(FindProcess(host, "det-agent"), -1) << "measured with the agent down";
  StartAgent(host);  // ...and the restarted agent adopts it.
  CheckNothingLost(id, kShape);
  EXPECT_EQ(Restarts(id), 0) << "the trial's run should have been adopted, not restarted";
  Report("`kill -9` an agent, restarted after its trial's next report",
         "the trial's run goes on meanwhile; the restarted agent adopts it", recovery);
}

TEST_F(FaultTest, AgentHostLostTheTrialResumesOnAnotherHost) {
  int64_t id = 0;
  const std::string host = StartAndWaitForProgress(&id);
  ASSERT_FALSE(host.empty());
  const ProgressMark fault = MarkProgress(id);
  agents_.erase(host);
  EXPECT_GT(net_->KillEverythingOn(host), 0);  // the agent and its trial: the host is gone
  const double recovery = SecondsUntilProgress(fault, /*in_a_new_run=*/true);
  CheckNothingLost(id, kShape);
  EXPECT_NE(HostRunningTrial(id), host);
  Report("an agent's host dies (agent and trial `kill -9`)",
         "after the reconnect window the trial resumes on another agent from its checkpoint",
         recovery);
}

TEST_F(FaultTest, MasterKilledAndRestartedLosesNothing) {
  int64_t id = 0;
  StartAndWaitForProgress(&id);
  const ProgressMark fault = MarkProgress(id);
  master_->Stop(SIGKILL);
  std::this_thread::sleep_for(1s);
  ASSERT_NO_FATAL_FAILURE(StartMaster());
  const double recovery = SecondsUntilProgress(fault, /*in_a_new_run=*/false);
  CheckNothingLost(id, kShape);
  EXPECT_EQ(Restarts(id), 0) << "the trial's run should have gone on through the restart";
  Report("`kill -9` the master (restarted after 1 s)",
         "agents reconnect, the trial's run goes on; its reports wait for the master", recovery);
}

TEST_F(FaultTest, DatabaseRestartLosesNothing) {
  int64_t id = 0;
  StartAndWaitForProgress(&id);
  const ProgressMark fault = MarkProgress(id);
  Status restarted = Internal("not run");
  ASSERT_TRUE(net_->RunOn("db", [&] { restarted = pg_->Restart(5s); }).ok());
  ASSERT_TRUE(restarted.ok()) << restarted.ToString();
  const double recovery = SecondsUntilProgress(fault, /*in_a_new_run=*/false);
  CheckNothingLost(id, kShape);
  EXPECT_EQ(Restarts(id), 0);
  Report("PostgreSQL restarted (down 5 s)", "the master reconnects; writes wait and are retried",
         recovery);
}

TEST_F(FaultTest, LinkCutShorterThanTheReconnectWindowKeepsTheTrial) {
  int64_t id = 0;
  const std::string host = StartAndWaitForProgress(&id);
  ASSERT_FALSE(host.empty());
  const ProgressMark fault = MarkProgress(id);
  ASSERT_TRUE(net_->Cut(host).ok());
  std::this_thread::sleep_for(5s);  // past the silence limit (2 s), within the window (8 s)
  ASSERT_TRUE(net_->Heal(host).ok());
  const double recovery = SecondsUntilProgress(fault, /*in_a_new_run=*/false);
  CheckNothingLost(id, kShape);
  EXPECT_EQ(Restarts(id), 0);
  EXPECT_EQ(HostRunningTrial(id), "");  // ended where it ran
  Report("an agent's link cut for 5 s (window 8 s)",
         "the agent is lost, then reconnects and keeps its trial", recovery);
}

TEST_F(FaultTest, LinkCutLongerThanTheReconnectWindowMovesTheTrial) {
  int64_t id = 0;
  const std::string host = StartAndWaitForProgress(&id);
  ASSERT_FALSE(host.empty());
  const ProgressMark fault = MarkProgress(id);
  ASSERT_TRUE(net_->Cut(host).ok());
  const double recovery = SecondsUntilProgress(fault, /*in_a_new_run=*/true);  // on another host
  ASSERT_TRUE(net_->Heal(host).ok());
  CheckNothingLost(id, kShape);
  Report("an agent's link cut for longer than the window (8 s)",
         "the trial resumes on another agent; when the link is back the old run is stopped",
         recovery);
}

TEST_F(FaultTest, LogFloodDuringAnAgentRestartIsStoredOnceInOrder) {
  // "1".."300000" in bursts of 10,000 lines, a tenth of a second apart: a flood that lasts a few
  // seconds (one `seq` of them all ends before the agent can be killed).
  constexpr int kLines = 300'000;
  const std::string flood =
      "i=0; while [ $i -lt 30 ]; do seq $((i*10000+1)) $((i*10000+10000)); sleep 0.1; "
      "i=$((i+1)); done";
  auto run = nlohmann::json::parse(Det("--json cmd run '" + flood + "'"), nullptr, false);
  ASSERT_TRUE(run.is_object()) << run.dump();
  const std::string task = run.value("task_id", "");
  std::string host;  // the agent reading the flood, once some of it is stored
  nlohmann::json logs, summary;
  for (int i = 0; i < 600 && host.empty(); ++i) {
    logs = Rest("GET", "/api/v1/tasks/" + task + "/logs?limit=1");
    summary = Rest("GET", "/api/v1/tasks/" + task);
    const auto& agents = summary["task"]["agents"];
    if (logs.is_array() && !logs.empty() && agents.is_array() && !agents.empty()) {
      host = agents[0].get<std::string>();
    } else {
      std::this_thread::sleep_for(20ms);
    }
  }
  ASSERT_FALSE(host.empty()) << "no line of the flood was stored: " << logs.dump() << " "
                             << summary.dump();
  ASSERT_NE(summary["task"].value("state", ""), "TERMINATED")
      << "the flood ended before its agent could be killed";
  agents_[host]->Stop(SIGKILL);
  std::this_thread::sleep_for(2s);
  const auto restarted = std::chrono::steady_clock::now();
  StartAgent(host);
  EXPECT_NE(Det("task wait " + task).find("TERMINATED"), std::string::npos)
      << ReadLog(host + ".log");
  const double recovery =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - restarted).count();
  int64_t after = 0, seen = 0;
  while (true) {
    auto page =
        Rest("GET", "/api/v1/tasks/" + task + "/logs?limit=10000&afterId=" + std::to_string(after));
    if (!page.is_array() || page.empty()) break;
    for (const auto& line : page) {
      ASSERT_EQ(line.value("log", ""), std::to_string(++seen)) << "line " << seen;
      after = std::stoll(line.value("id", "0"));
    }
  }
  EXPECT_EQ(seen, kLines);
  Report("`kill -9` an agent mid log flood (300,000 lines), restarted after 2 s",
         "every line is stored once and in order: the agent reads on from what the master "
         "confirmed (seconds: restart to the task's end with all lines stored)",
         recovery);
}

}  // namespace
}  // namespace det::testing
