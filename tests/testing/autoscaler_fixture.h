#pragma once

// A cluster of real processes (experiment_fixture.h) plus the det-autoscaler process, whose
// provider section the test's ExtraConfig() sets.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tests/testing/experiment_fixture.h"

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
