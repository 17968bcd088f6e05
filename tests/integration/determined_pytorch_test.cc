// Determined's PyTorch Trainer tutorial (examples/tutorials/mnist_pytorch of Determined 0.38.1,
// read from ../shared/conformance) on real PyTorch (Debian's python3-torch), unmodified: a
// `PyTorchTrial` run by `pytorch.Trainer` trains, validates every 100 batches, and checkpoints
// through the library, whose checkpoints carry the model definition the launcher unpacked at
// /run/determined/train/model. MNIST cannot be downloaded here: the test writes small
// MNIST-format files where the tutorial's data.py looks (tests/data/mnist_files.py), and stands in
// for torch.utils.tensorboard alone, which needs a package Debian lacks
// (tests/data/tensorboard_stand_in). Skipped, saying what is missing, without
// ../shared/conformance or python3-torch.
#include <fstream>
#include <sstream>

#include "tests/testing/determined_library_fixture.h"

namespace det::testing {
namespace {

std::string MissingTorch() {
  if (std::system("/usr/bin/python3 -c 'import torch, torchvision' >/dev/null 2>&1") == 0) {
    return "";
  }
  return "/usr/bin/python3 with torch and torchvision (python3-torch python3-torchvision; "
         "scripts/install-deps.sh installs them)";
}

class DeterminedPyTorchTest : public DeterminedLibraryTest {
 protected:
  std::vector<std::string> FrameworkStandIns() const override { return {"tensorboard_stand_in"}; }
  void SetUp() override {
    if (std::string missing = MissingForDeterminedLibrary(); !missing.empty()) {
      GTEST_SKIP() << "needs " << missing;
    }
    if (std::string missing = MissingTorch(); !missing.empty()) {
      GTEST_SKIP() << "needs " << missing;
    }
    DeterminedLibraryTest::SetUp();
    tutorial_ = dir_ / "mnist_pytorch";
    fs::copy(ConformanceDir() / "examples" / "tutorials" / "mnist_pytorch", tutorial_,
             fs::copy_options::recursive);
    Shell("chmod -R u+w " + tutorial_.string());
    // 6,400 training images: one epoch is 100 batches of the tutorial's 64.
    const std::string made =
        Shell("/usr/bin/python3 " + SourceDir() + "/tests/data/mnist_files.py " +
              (tutorial_ / "data").string() + " 6400 640 2>&1 && echo made");
    ASSERT_NE(made.find("made"), std::string::npos) << made;
  }
  int64_t SubmitTutorial(const std::string& config) {
    return Create((tutorial_ / config).string(), tutorial_.string());
  }
  // Submits `config` of the tutorial's folder to `agents` agents of `slots` slots, waits until it
  // ends, and expects it COMPLETED; its first trial's id (0 when it did not complete). The
  // experiment's id goes to `*id`.
  int64_t CompletedTrial(const std::string& config, int agents, int slots, int64_t* id) {
    StartAgents(agents, slots);
    *id = SubmitTutorial(config);
    const std::string ended = WaitEnded(*id);
    EXPECT_EQ(ended, "COMPLETED") << Logs(*id);
    return ended == "COMPLETED" ? Describe(*id)["trials"][0].value("id", int64_t{0}) : 0;
  }
  // The value of `metric` in the trial's last validation.
  double LastValidationValue(int64_t trial_id, const std::string& metric) {
    const nlohmann::json points =
        Metrics(trial_id, "validation").value("metrics", nlohmann::json::array());
    return points.empty() ? -1 : points.back()["metrics"].value(metric, -1.0);
  }
  static fs::path LegacyTrialDir() {
    return fs::path(SourceDir()) / "tests" / "data" / "legacy_pytorch_trial";
  }
  // The legacy trial (tests/data/legacy_pytorch_trial) beside the tutorial, and its config as
  // long.yaml: 200 batches (two epochs), reporting (and so looking for a preemption) every 10,
  // with `more` edits (from, to) of its text.
  void WriteLongLegacyConfig(const std::vector<std::pair<std::string, std::string>>& more) {
    fs::copy(LegacyTrialDir() / "model_def.py", tutorial_ / "model_def.py");
    std::stringstream legacy;
    legacy << std::ifstream(LegacyTrialDir() / "legacy.yaml").rdbuf();
    std::string config = legacy.str();
    std::vector<std::pair<std::string, std::string>> edits = {
        {"scheduling_unit: 50", "scheduling_unit: 10"}, {"epochs: 1", "batches: 200"}};
    edits.insert(edits.end(), more.begin(), more.end());
    for (const auto& [from, to] : edits) {
      ASSERT_NE(config.find(from), std::string::npos) << from;
      config.replace(config.find(from), from.size(), to);
    }
    std::ofstream(tutorial_ / "long.yaml") << config;
  }
  // The folders of the experiment's checkpoints in the shared_fs storage.
  std::vector<fs::path> CheckpointFolders(int64_t id) {
    const std::string out = Det("--json experiment list-checkpoints " + std::to_string(id));
    const nlohmann::json listed = nlohmann::json::parse(out, nullptr, false);
    EXPECT_TRUE(listed.is_array()) << out;
    std::vector<fs::path> folders;
    for (const auto& checkpoint : listed.is_array() ? listed : nlohmann::json::array()) {
      folders.push_back(dir_ / "checkpoints" / "determined-checkpoint" /
                        checkpoint.value("uuid", ""));
    }
    return folders;
  }

  fs::path tutorial_;
};

TEST_F(DeterminedPyTorchTest, ConstTrainsValidatesAndCheckpointsTheModelOnRealTorch) {
  int64_t id = 0;
  const int64_t trial_id = CompletedTrial("const.yaml", 1, 1, &id);
  ASSERT_GT(trial_id, 0);
  EXPECT_EQ(Steps(trial_id, "training"), std::vector<int64_t>{100});
  EXPECT_EQ(Steps(trial_id, "validation"), std::vector<int64_t>{100});
  EXPECT_GT(LastValidationValue(trial_id, "accuracy"), 0.9) << "the network learned the digits";
  const std::string logs = Logs(id);
  EXPECT_EQ(logs.find("off-cluster"), std::string::npos) << logs;

  const std::vector<fs::path> checkpoints = CheckpointFolders(id);
  ASSERT_FALSE(checkpoints.empty());
  const fs::path last = checkpoints.back();
  EXPECT_TRUE(fs::exists(last / "code" / "train.py")) << "the model definition as submitted";
  EXPECT_TRUE(fs::exists(last / "code" / "const.yaml"));
  const std::string loaded = Shell(
      "/usr/bin/python3 -c 'import sys, torch; state = torch.load(sys.argv[1]); "
      "print(sorted(state), sorted(state[\"models_state_dict\"][0])[:2])' " +
      (last / "state_dict.pth").string() + " 2>&1");
  EXPECT_NE(loaded.find("models_state_dict"), std::string::npos) << loaded;
  EXPECT_NE(loaded.find("0.weight"), std::string::npos) << loaded;
}

// distributed.yaml: Determined's torch_distributed launcher starts 8 ranks (gloo on CPU) of the
// tutorial's script on one agent; the chief reports for all of them, each rank's output is kept
// with its rank.
TEST_F(DeterminedPyTorchTest, DistributedRunsEightRanksOnOneAgent) {
  int64_t id = 0;
  const int64_t trial_id = CompletedTrial("distributed.yaml", 1, 8, &id);
  ASSERT_GT(trial_id, 0);
  // 6,400 images in batches of 64 across 8 ranks: 100 batches, as on one slot.
  EXPECT_EQ(Steps(trial_id, "validation"), std::vector<int64_t>{100});
  EXPECT_GT(LastValidationValue(trial_id, "accuracy"), 0.9);
  const std::string logs = Logs(id);
  for (int rank = 0; rank < 8; ++rank) {
    EXPECT_NE(logs.find("[rank=" + std::to_string(rank) + "]"), std::string::npos) << rank;
  }
  ASSERT_FALSE(CheckpointFolders(id).empty());
}

// Determined's legacy entrypoint (model_def:TrialClass) runs the class as Determined's launcher
// did, with the training length, the periods and the batch size its harness reads from the
// experiment config (global_batch_size, records_per_epoch, scheduling_unit,
// min_validation_period, min_checkpoint_period), and its fields the config leaves out at
// Determined's defaults.
TEST_F(DeterminedPyTorchTest, ALegacyEntrypointRunsItsTrialClassAsDeterminedsHarnessDid) {
  for (const char* file : {"model_def.py", "legacy.yaml"}) {
    fs::copy(LegacyTrialDir() / file, tutorial_ / file);
  }
  int64_t id = 0;
  const int64_t trial_id = CompletedTrial("legacy.yaml", 1, 1, &id);
  ASSERT_GT(trial_id, 0);
  EXPECT_EQ(Steps(trial_id, "training"), (std::vector<int64_t>{50, 100}));
  EXPECT_EQ(Steps(trial_id, "validation"), (std::vector<int64_t>{50, 100}));
  EXPECT_GT(LastValidationValue(trial_id, "accuracy"), 0.9);
  const std::string logs = Logs(id);
  EXPECT_NE(logs.find("MNistTrial"), std::string::npos) << logs;
  const std::vector<fs::path> checkpoints = CheckpointFolders(id);
  ASSERT_FALSE(checkpoints.empty());
  EXPECT_TRUE(fs::exists(checkpoints.back() / "code" / "model_def.py"));
}

// Paused mid-epoch, the Trainer checkpoints through the library and exits; activated, it resumes
// from that checkpoint (info.latest_checkpoint): every training and validation step is reported
// once, none missing. The legacy config reports (and so looks for a preemption) every 10 batches
// here, over 200 batches: two epochs.
TEST_F(DeterminedPyTorchTest, PausedMidEpochTheTrainerResumesWithoutAGapOrARepeat) {
  WriteLongLegacyConfig({});
  StartAgents(1, 1);
  const int64_t id = SubmitTutorial("long.yaml");
  ASSERT_TRUE(WaitForTrial(id, [&](const nlohmann::json& t) {
    return Steps(t.value("id", int64_t{0}), "training").size() >= 3;
  })) << Logs(id);
  Det("experiment pause " + std::to_string(id));
  ASSERT_TRUE(WaitForTrial(id, [](auto& t) { return t.value("task_state", "") != "RUNNING"; }));
  const int64_t trial_id = Describe(id)["trials"][0].value("id", int64_t{0});
  const size_t before = Steps(trial_id, "training").size();
  ASSERT_LT(before, 20u) << "paused too late to resume";
  const nlohmann::json saved =
      nlohmann::json::parse(Det("--json experiment list-checkpoints " + std::to_string(id)));
  ASSERT_TRUE(saved.is_array() && !saved.empty()) << saved.dump();
  const int64_t paused_at = saved.back().value("steps_completed", int64_t{0});
  ASSERT_GT(paused_at, 0);
  Det("experiment activate " + std::to_string(id));
  ASSERT_EQ(WaitEnded(id), "COMPLETED") << Logs(id);
  EXPECT_EQ(Describe(id)["trials"][0].value("run_id", 0), 2);
  EXPECT_EQ(Steps(trial_id, "training"), Every(10, 200)) << "no gap";
  EXPECT_EQ(Steps(trial_id, "validation"), Every(50, 200));
  const std::string logs = Logs(id);
  EXPECT_NE(logs.find("Restoring trial from checkpoint"), std::string::npos) << logs;
  // Run 2 counted from the checkpoint's batch, so it reported no step run 1 had (the metrics
  // would keep a repeat once: the library's log says what was sent).
  EXPECT_NE(logs.find("starting at steps_completed=" + std::to_string(paused_at)),
            std::string::npos)
      << logs;
  for (int64_t step : Every(10, 200)) {
    EXPECT_EQ(
        Occurrences(logs, "report_training_metrics(steps_completed=" + std::to_string(step) + ","),
        1u)
        << "step " << step << " reported once: " << logs;
  }
}

// The agent lost mid-run (it and its run killed, as when its host goes): after the reconnect
// window the trial runs again on another agent from its latest checkpoint, counting from that
// checkpoint's batch, and its training steps come out with no gap.
class DeterminedPyTorchFaultTest : public DeterminedPyTorchTest {
 protected:
  std::string ExtraBusConfig() const override { return "  agent_reconnect_wait: 5s\n"; }
};

TEST_F(DeterminedPyTorchFaultTest, AnAgentLostMidRunTheTrainerGoesOnFromItsCheckpoint) {
  WriteLongLegacyConfig(
      {{"min_checkpoint_period:\n  batches: 100", "min_checkpoint_period:\n  batches: 30"}});
  StartAgents(1, 1);
  const int64_t id = SubmitTutorial("long.yaml");
  const auto checkpoints = [&] {
    return nlohmann::json::parse(Det("--json experiment list-checkpoints " + std::to_string(id)),
                                 nullptr, false);
  };
  ASSERT_TRUE(WaitForTrial(id, [&](const nlohmann::json&) {
    const nlohmann::json saved = checkpoints();
    return saved.is_array() && !saved.empty();
  })) << Logs(id);
  agents_.clear();  // the host goes: its agent and its run
  KillLeftoverWorkloads();
  const nlohmann::json saved = checkpoints();
  ASSERT_TRUE(saved.is_array() && !saved.empty()) << saved.dump();
  int64_t restored = 0;
  for (const auto& checkpoint : saved) {
    restored = std::max(restored, checkpoint.value("steps_completed", int64_t{0}));
  }
  ASSERT_LT(restored, 200) << "lost too late to resume";
  agents_.push_back(StartAgent("agent-b", 1));
  ASSERT_EQ(WaitEnded(id), "COMPLETED") << Logs(id);
  const nlohmann::json trial = Describe(id)["trials"][0];
  EXPECT_GE(trial.value("run_id", 0), 2) << trial.dump();
  EXPECT_EQ(Steps(trial.value("id", int64_t{0}), "training"), Every(10, 200)) << "no gap";
  const std::string logs = Logs(id);
  EXPECT_NE(logs.find("starting at steps_completed=" + std::to_string(restored)), std::string::npos)
      << "the new run counts from checkpoint " << restored << ": " << logs;
}

}  // namespace
}  // namespace det::testing
