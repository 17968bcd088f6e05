#pragma once

// A cluster of real processes running Determined 0.38.1's own Python library, unmodified: the
// fixture of tests/integration/determined_library*_test.cc. The library and its Core API
// tutorials are read from ../shared/conformance/determined-0.38.1 (DET_CONFORMANCE_DIR overrides);
// without them, or without the Python packages the library imports, the tests skip saying what
// is missing.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "tests/testing/experiment_fixture.h"
#include "tests/testing/rest_client.h"
#include "tests/testing/test_util.h"

namespace det::testing {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

// DET_CONFORMANCE_DIR, else shared/conformance/determined-0.38.1 beside the checkout (or beside
// one of its parents).
inline fs::path ConformanceDir() {
  return testing::BesideCheckout(DET_SOURCE_DIR_DEFAULT,
                                 fs::path("shared") / "conformance" / "determined-0.38.1",
                                 "DET_CONFORMANCE_DIR");
}

// What the test needs beyond the build, or "" when everything is there.
inline std::string MissingForDeterminedLibrary() {
  const fs::path library = ConformanceDir() / "harness" / "determined";
  if (!fs::exists(library)) {
    return "Determined's library is not at " + library.string() +
           " (../shared/conformance beside the checkout, or DET_CONFORMANCE_DIR)";
  }
  const std::string probe =
      "PYTHONPATH=" + (ConformanceDir() / "harness").string() +
      " /usr/bin/python3 -c 'import determined, zmq, requests' >/dev/null 2>&1";
  if (std::system(probe.c_str()) != 0) {
    return "/usr/bin/python3 cannot import determined with its packages (python3-requests, "
           "python3-zmq, ...: ../shared/conformance/README.md; scripts/install-deps.sh installs "
           "them)";
  }
  if (geteuid() != 0) return "root (runs get /run/determined/info from a mount namespace)";
  return "";
}

class DeterminedLibraryTest : public ExperimentFixture {
 protected:
  // The folders of tests/data put on the trials' PYTHONPATH after the library: the stand-in for
  // torch.utils.tensorboard (the writer the library builds), and a torch package of nothing else
  // (these tests need no real torch).
  virtual std::vector<std::string> FrameworkStandIns() const {
    return {"tensorboard_stand_in", "ml_framework_stub"};
  }
  // The checkpoint storage master.yaml gives every experiment: shared_fs in the test's folder.
  std::string ExtraConfig() const override {
    return "checkpoint_storage:\n  type: shared_fs\n  host_path: " +
           (dir_ / "checkpoints").string() + "\n  storage_path: determined-checkpoint\n";
  }
  void SetUp() override {
    if (std::string missing = MissingForDeterminedLibrary(); !missing.empty())
      GTEST_SKIP() << "needs " << missing;
    ExperimentFixture::SetUp();
    fs::create_directories(dir_ / "checkpoints");
    fs::copy(ConformanceDir() / "examples" / "tutorials" / "core_api", dir_ / "core_api",
             fs::copy_options::recursive);
    // The runs import the library as their account (`nobody`, the agents' default_task_user),
    // which need not pass through the folders above the checkout and ../shared: they read a copy
    // in the test's folder (3 MB), as they would read an image's.
    fs::create_directories(dir_ / "library");
    fs::copy(ConformanceDir() / "harness", dir_ / "library" / "harness",
             fs::copy_options::recursive);
    std::string pythonpath_now = (dir_ / "library" / "harness").string();
    for (const std::string& stand_in : FrameworkStandIns()) {
      fs::copy(fs::path(SourceDir()) / "tests" / "data" / stand_in, dir_ / "library" / stand_in,
               fs::copy_options::recursive);
      pythonpath_now += ":" + (dir_ / "library" / stand_in).string();
    }
    // Agents (and so their runs) import the library and find Debian's python3 first.
    saved_path_ = std::getenv("PATH");
    const char* pythonpath = std::getenv("PYTHONPATH");
    saved_pythonpath_ = pythonpath ? pythonpath : "";
    setenv("PATH", ("/usr/bin:" + saved_path_).c_str(), 1);
    setenv("PYTHONPATH", pythonpath_now.c_str(), 1);
  }
  void TearDown() override {
    if (!saved_path_.empty()) {
      setenv("PATH", saved_path_.c_str(), 1);
      setenv("PYTHONPATH", saved_pythonpath_.c_str(), 1);
    }
    agents_.clear();
    if (!dir_.empty()) ExperimentFixture::TearDown();
  }
  void StartAgents(int count, int slots) {
    for (int i = 0; i < count; ++i) {
      agents_.push_back(StartAgent("agent-" + std::to_string(i), slots));
    }
  }
  // Submits tutorial `stage` (its YAML and its folder, as they are).
  int64_t Submit(const std::string& stage) {
    return Create((dir_ / "core_api" / (stage + ".yaml")).string(), (dir_ / "core_api").string());
  }
  int64_t Create(const std::string& config, const std::string& folder) {
    const std::string out = Det("--json experiment create " + config + " " + folder);
    auto reply = nlohmann::json::parse(out, nullptr, false);
    EXPECT_TRUE(reply.is_object()) << out;
    return reply.is_object() ? reply.value("id", int64_t{0}) : 0;
  }
  std::string Logs(int64_t id) { return Det("experiment logs " + std::to_string(id)); }
  // The trial's metrics of `group` through REST, as the WebUI reads them.
  nlohmann::json Metrics(int64_t trial_id, const std::string& group) {
    testing::RestClient rest(std::stoi(rest_port_));
    const std::string token = rest.Login("admin", testing::kAdminPassword);
    auto reply = rest.Send(
        "GET", "/api/v1/trials/" + std::to_string(trial_id) + "/metrics?kind=" + group, token);
    EXPECT_EQ(reply.status, 200) << reply.text;
    return nlohmann::json::parse(reply.text, nullptr, false);
  }
  std::vector<int64_t> Steps(int64_t trial_id, const std::string& group) {
    std::vector<int64_t> steps;
    const nlohmann::json metrics = Metrics(trial_id, group);
    for (const auto& point : metrics.value("metrics", nlohmann::json::array())) {
      steps.push_back(point.value("step", int64_t{-1}));
    }
    return steps;
  }
  // Waits (up to a minute) until the experiment's first trial has `count` training reports.
  bool WaitForTrainingReports(int64_t id, size_t count) {
    for (int i = 0; i < 600; ++i) {
      const nlohmann::json trials = Describe(id)["trials"];
      if (trials.is_array() && !trials.empty() &&
          Steps(trials[0].value("id", int64_t{0}), "training").size() >= count) {
        return true;
      }
      std::this_thread::sleep_for(100ms);
    }
    return false;
  }
  // Stage 4 ended COMPLETED, and its last x is 8 workers' increment_by summed over 100 batches.
  void ExpectStage4Completed(int64_t id) {
    ASSERT_EQ(WaitEnded(id), "COMPLETED") << Logs(id);
    const nlohmann::json trial = Describe(id)["trials"][0];
    const int64_t increment = trial["hparams"].value("increment_by", int64_t{0});
    EXPECT_EQ(LastValidation(trial.value("id", int64_t{0}), "x"), 800 * increment);
  }
  // The value of `metric` in the trial's last validation.
  int64_t LastValidation(int64_t trial_id, const std::string& metric) {
    const nlohmann::json points =
        Metrics(trial_id, "validation").value("metrics", nlohmann::json::array());
    return points.empty() ? -1 : points.back()["metrics"].value(metric, int64_t{-1});
  }
  static std::vector<int64_t> Every(int64_t period, int64_t last) {
    std::vector<int64_t> steps;
    for (int64_t s = period; s <= last; s += period) steps.push_back(s);
    return steps;
  }

  std::vector<std::unique_ptr<testing::Process>> agents_;
  std::string saved_path_;
  std::string saved_pythonpath_;
};

}  // namespace det::testing
