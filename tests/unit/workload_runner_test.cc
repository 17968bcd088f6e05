// The workload runner's state machine against a fake runtime
// (tests/testing/fake_workload_runtime.h): which runtime a start goes to, the states it reports and
// in which order, a stop's grace and the runtime's margin on a simulated clock, the end's clean-up
// and recorded ending, and what a restarted agent adopts again and sweeps.
#include "agent/workload_runner.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "agent/workload_record.h"
#include "bus/envelope.h"
#include "tests/testing/fake_workload_runtime.h"

namespace det::agent {
namespace {

namespace fs = std::filesystem;
using testing::FakeWorkloadRuntime;

class WorkloadRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("det-runner-" + bus::RandomId().substr(0, 12));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    runner_.reset();
    fs::remove_all(dir_);
  }

  // A runner over the fakes: `containers` for starts that name an image, when given.
  WorkloadRunner& Runner(FakeWorkloadRuntime* containers = nullptr) {
    runner_ = std::make_unique<WorkloadRunner>(
        WorkloadRunner::Options{"agent-1", dir_.string(), {}, std::nullopt}, clock_, shipper_,
        WorkloadRunner::Runtimes{&processes_, containers});
    return *runner_;
  }

  static bus::WorkloadStart StartOf(const std::string& id, const std::string& image = "") {
    bus::WorkloadStart start;
    start.allocation_id = id;
    start.task_id = "task-" + id;
    start.entrypoint = {"true"};
    start.container.image = image;
    return start;
  }

  // Polls and ticks the runner until `done()` holds (true) or `limit` of real time passes (false):
  // the workloads are real processes, whose exits and output arrive when they do.
  bool TickUntil(const std::function<bool()>& done, Duration limit = std::chrono::seconds(10)) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!done()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::vector<zmq::pollitem_t> items;
      runner_->AppendPollItems(&items);
      zmq::poll(items.data(), items.size(), std::chrono::milliseconds(50));
      runner_->Tick(items, &reports_);
    }
    return true;
  }
  // Ticks once without waiting (after the simulated clock moved).
  void TickNow() {
    std::vector<zmq::pollitem_t> items;
    runner_->AppendPollItems(&items);
    zmq::poll(items.data(), items.size(), std::chrono::milliseconds(0));
    runner_->Tick(items, &reports_);
  }

  std::vector<std::string> StatesOf(const std::string& id) const {
    std::vector<std::string> states;
    for (const auto& state : reports_.states) {
      if (state.allocation_id == id) states.push_back(state.state);
    }
    return states;
  }
  std::optional<bus::WorkloadState> EndOf(const std::string& id) const {
    for (const auto& state : reports_.states) {
      if (state.allocation_id == id && state.state == bus::kWorkloadTerminated) return state;
    }
    return std::nullopt;
  }
  bool Ended(const std::string& id) const { return EndOf(id).has_value(); }
  std::string LogsOf(const std::string& id) const {
    std::string text;
    for (const auto& batch : reports_.logs) {
      if (batch.allocation_id != id) continue;
      for (const auto& line : batch.lines) text += line.text;
    }
    return text;
  }
  std::string FolderOf(const std::string& id) const { return (dir_ / id).string(); }

  fs::path dir_;
  SimulatedClock clock_;
  LogShipper shipper_{"incarnation-1"};
  FakeWorkloadRuntime processes_;
  std::unique_ptr<WorkloadRunner> runner_;
  WorkloadRunner::Reports reports_;
};

using States = std::vector<std::string>;

TEST_F(WorkloadRunnerTest, AProcessIsStartingThenRunningThenEndsWithItsExitCodeAndOutput) {
  processes_.scripts["a1"] = {.output = "hello\n", .exit_code = 3};
  WorkloadRunner& runner = Runner();
  runner.Start(StartOf("a1"), &reports_);
  ASSERT_TRUE(TickUntil([&] { return Ended("a1"); }));
  EXPECT_EQ(StatesOf("a1"), (States{"PULLING", "STARTING", "RUNNING", "TERMINATED"}));
  EXPECT_EQ(EndOf("a1")->exit_code, 3);
  EXPECT_EQ(EndOf("a1")->failure_type, bus::kFailureTaskError);
  EXPECT_EQ(LogsOf("a1"), "hello");
  EXPECT_EQ(processes_.cleaned_up, (std::vector<std::string>{"a1"}));
}

TEST_F(WorkloadRunnerTest, AStartNamingAnImageGoesToTheContainersOnlyWhereThereAreAny) {
  FakeWorkloadRuntime containers(/*reports_phases=*/true);
  Runner(&containers).Start(StartOf("c1", "debian"), &reports_);
  runner_->Start(StartOf("p1"), &reports_);
  EXPECT_EQ(containers.spawned, (std::vector<std::string>{"c1"}));
  EXPECT_EQ(processes_.spawned, (std::vector<std::string>{"p1"}));
  ASSERT_TRUE(TickUntil([&] { return Ended("c1") && Ended("p1"); }));

  // Without a container runtime, the image is no reason to leave the processes.
  Runner().Start(StartOf("p2", "debian"), &reports_);
  EXPECT_EQ(processes_.spawned, (std::vector<std::string>{"p1", "p2"}));
  ASSERT_TRUE(TickUntil([&] { return Ended("p2"); }));
}

TEST_F(WorkloadRunnerTest, ARuntimeThatReportsPhasesIsHeardOnceInOrderWithoutSkippingAStep) {
  FakeWorkloadRuntime containers(/*reports_phases=*/true);
  containers.scripts["c1"] = {.wait_for_signal = true};
  WorkloadRunner& runner = Runner(&containers);
  runner.Start(StartOf("c1", "debian"), &reports_);
  EXPECT_EQ(StatesOf("c1"), (States{"PULLING"})) << "no STARTING or RUNNING from the runner";

  containers.phases[FolderOf("c1")] = "RUNNING";  // the pump went from PULLING to RUNNING
  clock_.Advance(std::chrono::seconds(1));        // the next sweep reads it
  TickNow();
  EXPECT_EQ(StatesOf("c1"), (States{"PULLING", "STARTING", "RUNNING"}));
  clock_.Advance(std::chrono::seconds(1));
  TickNow();
  EXPECT_EQ(StatesOf("c1").size(), 3u) << "a phase is reported once";
  ASSERT_EQ(runner.States().size(), 1u);
  EXPECT_EQ(runner.States()[0].state, "RUNNING");

  runner.Kill({"c1", 0});
  ASSERT_TRUE(TickUntil([&] { return Ended("c1"); }));
}

TEST_F(WorkloadRunnerTest, AStopGetsItsGraceAndTheRuntimesMarginBeforeSigkill) {
  processes_.scripts["a1"] = {.wait_for_signal = true, .ignore_sigterm = true};
  processes_.stop_margin = std::chrono::seconds(30);
  WorkloadRunner& runner = Runner();
  runner.Start(StartOf("a1"), &reports_);
  runner.Kill({"a1", 10'000});
  ASSERT_EQ(processes_.stops.size(), 1u);
  EXPECT_EQ(processes_.stops[0].grace, std::chrono::seconds(10));

  clock_.Advance(std::chrono::seconds(39));  // the grace and most of the margin
  EXPECT_FALSE(TickUntil([&] { return Ended("a1"); }, std::chrono::milliseconds(300)))
      << "SIGTERM is ignored and SIGKILL is not due yet";
  clock_.Advance(std::chrono::seconds(2));
  ASSERT_TRUE(TickUntil([&] { return Ended("a1"); }));
  EXPECT_EQ(EndOf("a1")->exit_code, 128 + SIGKILL);
  EXPECT_EQ(EndOf("a1")->failure_type, bus::kFailureKilled);
}

TEST_F(WorkloadRunnerTest, TheRuntimesRecordedEndingDecidesTheFailure) {
  FakeWorkloadRuntime containers(/*reports_phases=*/true);
  containers.scripts["c1"] = {.exit_code = 137};
  containers.endings[FolderOf("c1")] = "oom 137";
  Runner(&containers).Start(StartOf("c1", "debian"), &reports_);
  ASSERT_TRUE(TickUntil([&] { return Ended("c1"); }));
  EXPECT_EQ(EndOf("c1")->exit_code, 137);
  EXPECT_NE(EndOf("c1")->message.find("out of memory"), std::string::npos);
  EXPECT_EQ(containers.cleaned_up, (std::vector<std::string>{"c1"}));
  EXPECT_TRUE(processes_.cleaned_up.empty());
}

TEST_F(WorkloadRunnerTest, ASpawnTheRuntimeRefusesEndsAsStartFailedWithNothingLeft) {
  processes_.refuse_spawn = true;
  WorkloadRunner& runner = Runner();
  runner.Start(StartOf("a1"), &reports_);
  ASSERT_TRUE(Ended("a1"));
  EXPECT_EQ(EndOf("a1")->failure_type, bus::kFailureStartFailed);
  EXPECT_NE(EndOf("a1")->message.find("refused"), std::string::npos);
  EXPECT_TRUE(runner.States().empty());
}

TEST_F(WorkloadRunnerTest, ARestartedAgentAsksTheOwningRuntimeToAdoptAgainAndSweepsTheRest) {
  // What a previous agent left: two folders whose shims are gone, one of them a container's.
  FakeWorkloadRuntime containers(/*reports_phases=*/true);
  for (const std::string id : {"c1", "p1"}) {
    fs::create_directories(FolderOf(id));
    for (const char* file : {kStdoutFile, kStderrFile}) std::ofstream(FolderOf(id) + "/" + file);
    ASSERT_TRUE(WriteWorkloadRecord(FolderOf(id), {id, "task-" + id, 999999, false, 0, 0}).ok());
  }
  containers.owned.insert(FolderOf("c1"));
  containers.readopt_with = FakeWorkloadRuntime::Script{.output = "again\n", .exit_code = 0};
  Runner(&containers).Recover(&reports_);

  EXPECT_EQ(containers.readopted, (std::vector<std::string>{"c1"}));
  EXPECT_EQ(processes_.readopted, (std::vector<std::string>{"p1"}));
  EXPECT_TRUE(Ended("p1")) << "nothing to adopt: ended while the agent was away";
  EXPECT_FALSE(Ended("c1")) << "its container was adopted by a new pump";
  ASSERT_EQ(containers.swept.size(), 1u);
  EXPECT_EQ(containers.swept[0], (std::set<std::string>{"c1"}));
  ASSERT_TRUE(TickUntil([&] { return Ended("c1"); }));
  EXPECT_EQ(LogsOf("c1"), "again");
  EXPECT_EQ(EndOf("c1")->exit_code, 0);
}

}  // namespace
}  // namespace det::agent
