#pragma once

// A cluster of real processes (cluster_fixture.h) that runs the example experiment: its configs,
// det experiment create, describe and wait.

#include <yaml-cpp/yaml.h>

#include <functional>

#include "tests/testing/cluster_fixture.h"
#include "tests/testing/test_util.h"

namespace det::testing {

class ExperimentFixture : public ClusterProcessTest {
 protected:
  static std::string Example() { return SourceDir() + "/examples/linear_regression"; }
  static std::string SourceDir() {
    const char* dir = std::getenv("DET_SOURCE_DIR");
    return dir ? dir : DET_SOURCE_DIR_DEFAULT;
  }

  // The example config `name` with checkpoints in the test's folder, after `edit`.
  std::string Config(const std::string& name, const std::function<void(YAML::Node&)>& edit = {}) {
    YAML::Node config = YAML::LoadFile(Example() + "/" + name);
    config["checkpoint_storage"]["host_path"] = (dir_ / "checkpoints").string();
    if (edit) edit(config);
    const fs::path path = dir_ / ("config-" + bus::RandomId() + ".yaml");
    YAML::Emitter out;
    out << config;
    std::ofstream(path) << out.c_str();
    return path.string();
  }
  int64_t Create(const std::string& config_path) {
    const std::string out = Det("--json experiment create " + config_path + " " + Example());
    auto reply = nlohmann::json::parse(out, nullptr, false);
    EXPECT_TRUE(reply.is_object()) << out;
    return reply.is_object() ? reply.value("id", int64_t{0}) : 0;
  }
  nlohmann::json Describe(int64_t id) {
    const std::string out = Det("--json experiment describe " + std::to_string(id));
    auto reply = nlohmann::json::parse(out, nullptr, false);
    EXPECT_TRUE(reply.is_object()) << out;
    return reply;
  }
  std::string WaitEnded(int64_t id) {
    Det("experiment wait " + std::to_string(id));
    return Describe(id)["experiment"].value("state", "");
  }
  // Waits (up to `limit`) until `det experiment describe` no longer finds the experiment.
  bool WaitDeleted(int64_t id, std::chrono::milliseconds limit = std::chrono::seconds(60)) {
    return Eventually(
        [&] {
          return Det("experiment describe " + std::to_string(id)).find("not found") !=
                 std::string::npos;
        },
        limit);
  }
  // How many times `needle` occurs in `text`.
  static size_t Occurrences(const std::string& text, const std::string& needle) {
    size_t count = 0;
    for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
      ++count;
    }
    return count;
  }
  // Polls the first trial until `done` holds (at most a minute).
  bool WaitForTrial(int64_t id, const std::function<bool(const nlohmann::json&)>& done) {
    for (int i = 0; i < 600; ++i) {
      auto trials = Describe(id)["trials"];
      if (trials.is_array() && !trials.empty() && done(trials[0])) return true;
      std::this_thread::sleep_for(100ms);
    }
    return false;
  }
};

}  // namespace det::testing
