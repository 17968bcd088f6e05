#pragma once

// A cluster of real processes (experiment_fixture.h) plus the det-autoscaler process, whose
// provider section the test's ExtraConfig() sets.

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/testing/experiment_fixture.h"
#include "tests/testing/test_util.h"

namespace det::testing {

class AutoscalerFixture : public ExperimentFixture {
 protected:
  void StartAutoscaler(const std::string& log = "autoscaler.log") {
    auto endpoints = LoadYamlFile((dir_ / "endpoints.yaml").string());
    ASSERT_TRUE(endpoints.ok());
    autoscaler_ = std::make_unique<Process>(
        std::vector<std::string>{
            BuildDir() + "/autoscaler/det-autoscaler", "--master-host", "127.0.0.1",
            "--event-subscribe-port", gateway_port_of(event_subscribe_), "--snapshot-port",
            gateway_port_of(snapshot_), "--event-publish-port",
            gateway_port_of((*endpoints)["event_publish"].as<std::string>()), "--plaintext"},
        dir_ / log);
  }

  // Runs the example with 10 s of training; once 40 steps are done, `lose_instance` takes away
  // the instance its agent runs on (a spot interruption, a preemption). The trial must then
  // complete on a replacement, resumed from its checkpoint: a second run, and no restart of
  // max_restarts spent (losing the machine is not the trial's failure).
  void ExpectTrialSurvivesLosingItsInstance(const std::function<void()>& lose_instance) {
    const int64_t id = Create(Config("const.yaml", [](YAML::Node& config) {
      config["hyperparameters"]["step_seconds"] = 0.05;
    }));
    ASSERT_GT(id, 0);
    ASSERT_TRUE(WaitForTrial(id, [](auto& t) { return t.value("steps_completed", 0) >= 40; }))
        << Log("autoscaler.log");
    lose_instance();
    EXPECT_EQ(WaitEnded(id), "COMPLETED") << Log("master.log") << Log("autoscaler.log");
    const nlohmann::json trial = Describe(id)["trials"][0];
    EXPECT_EQ(trial.value("run_id", 0), 2) << trial.dump();
    EXPECT_EQ(trial.value("restarts", -1), 0) << trial.dump();
    EXPECT_EQ(trial.value("steps_completed", 0), 200);
  }

  // Issue 27: the cloud announces the end of the instance the trial runs on (`give_notice`, with
  // max_instances 1). The trial (20 s of training, no checkpoint due before its end) must
  // checkpoint at once and stop with a reason naming `cloud_said`; `launches` (the cloud's launch
  // calls) must reach 2 while `doomed_runs` still says the noticed instance runs; and the trial
  // must complete on the replacement, resumed from that checkpoint with no restart spent.
  void ExpectTrialCheckpointsDuringTheNotice(const std::function<void()>& give_notice,
                                             const std::function<int()>& launches,
                                             const std::function<bool()>& doomed_runs,
                                             const std::string& cloud_said) {
    using namespace std::chrono_literals;
    const int64_t id = Create(Config("const.yaml", [](YAML::Node& config) {
      config["hyperparameters"]["step_seconds"] = 0.1;   // 20 s of training
      config["min_validation_period"]["batches"] = 200;  // no checkpoint before the end
    }));
    ASSERT_GT(id, 0);
    // Training (steps_completed moves only with validations, here only at the end).
    ASSERT_TRUE(Eventually(
        [&] { return Det("trial logs 1").find("run 1: starting at step 0") != std::string::npos; },
        60s))
        << Log("autoscaler.log");
    std::this_thread::sleep_for(2s);
    give_notice();
    EXPECT_TRUE(Eventually([&] { return launches() == 2; }, 14s))
        << "the replacement is launched during the notice: " << Log("autoscaler.log");
    EXPECT_TRUE(doomed_runs()) << "still in its notice";
    EXPECT_EQ(WaitEnded(id), "COMPLETED") << Log("master.log") << Log("autoscaler.log");
    const nlohmann::json trial = Describe(id)["trials"][0];
    EXPECT_EQ(trial.value("restarts", -1), 0) << "losing the machine is not the trial's failure";
    const std::string logs = Det("trial logs " + std::to_string(trial.value("id", 0)));
    EXPECT_NE(logs.find("the agent's machine is being taken away (" + cloud_said),
              std::string::npos)
        << logs;
    // Preempted, not failed: the same run placed again, resumed from the checkpoint it made
    // during the notice.
    std::vector<int> starts;
    const std::string marker = ": starting at step ";
    for (size_t at = logs.find(marker); at != std::string::npos; at = logs.find(marker, at + 1)) {
      starts.push_back(std::atoi(logs.c_str() + at + marker.size()));
    }
    ASSERT_EQ(starts.size(), 2u) << logs;
    EXPECT_EQ(starts[0], 0);
    EXPECT_GT(starts[1], 0) << logs;
    EXPECT_EQ(launches(), 2) << Log("autoscaler.log");
  }

  // How often `needle` occurs in the log `name`.
  size_t CountInLog(const std::string& name, const std::string& needle) {
    const std::string text = Log(name);
    size_t count = 0;
    for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
      ++count;
    }
    return count;
  }

  std::unique_ptr<Process> autoscaler_;
};

}  // namespace det::testing
