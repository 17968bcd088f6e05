#pragma once

// A cluster of real processes (experiment_fixture.h) plus the det-autoscaler process, whose
// provider section the test's ExtraConfig() sets.

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
