// The experiment state machine with recorded effects: restarts, pause/activate, cancel, the
// searcher's stops and the end states.
#include "master/experiments/experiment/experiment.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "bus/catalog/workload.h"

namespace det::master::experiment {
namespace {

class RecordingEffects : public ExperimentEffects {
 public:
  Result<int64_t> CreateTrial(int64_t, const Trial&) override { return ++last_id; }
  void StartRun(const Trial& trial) override { started.push_back(trial.TaskId()); }
  void StopRun(const Trial& trial) override { stopped.push_back(trial.TaskId()); }
  void TrialChanged(const Trial&) override { ++trial_writes; }
  void ExperimentChanged(const Experiment&) override { ++experiment_writes; }

  int64_t last_id = 0;
  std::vector<std::string> started, stopped;
  int trial_writes = 0, experiment_writes = 0;
};

std::unique_ptr<Experiment> Make(RecordingEffects& effects, const std::string& searcher,
                                 int max_restarts = 2) {
  auto config = ParseExperimentConfig(YAML::Load(
      "entrypoint: python3 train.py\nhyperparameters: {lr: {type: double, minval: 0, maxval: "
      "1}}\nsearcher: " +
      searcher + "\ncheckpoint_storage: {host_path: /tmp/c}\nmax_restarts: " +
      std::to_string(max_restarts) + "\n"));
  EXPECT_TRUE(config.ok()) << config.status().ToString();
  auto search = searcher::Searcher::Make(config->searcher, config->hyperparameters, 7);
  EXPECT_TRUE(search.ok());
  auto experiment =
      std::make_unique<Experiment>(1, std::move(*config), std::move(*search), effects);
  EXPECT_TRUE(experiment->Start(0).ok());
  return experiment;
}

constexpr const char* kSingle = "{name: single, metric: loss, max_length: {batches: 100}}";
const RunEnd kExitedZero{0, "", ""};
const RunEnd kCrashed{137, std::string(bus::kFailureTaskError), "killed by signal 9"};
const RunEnd kAgentLost{-1, std::string(bus::kFailureAgentFailed), "agent lost"};

TEST(ExperimentTest, ASingleTrialRunsAndCompletesTheExperiment) {
  RecordingEffects effects;
  auto experiment = Make(effects, kSingle);
  ASSERT_EQ(effects.started, std::vector<std::string>{"trial-1-1"});
  ASSERT_TRUE(experiment->Validated(1, 100, {{"loss", 0.5}, {"batches", 100}}, 1).ok());
  experiment->RunEnded(1, kExitedZero, 2);
  EXPECT_EQ(experiment->trials().at(1).state, kCompleted);
  EXPECT_EQ(experiment->state(), kCompleted);
}

// A clean exit before the trial validated at max_length (someone else stopped the process, or
// the script returned early) is a failed run, not a completed trial: the trial's metrics would have
// a hole the user was never told of.
TEST(ExperimentTest, ARunThatExitsZeroBeforeTheSearcherIsDoneIsRestartedNotCompleted) {
  RecordingEffects effects;
  auto experiment = Make(effects, kSingle, /*max_restarts=*/1);
  ASSERT_TRUE(experiment->Validated(1, 40, {{"loss", 0.5}, {"batches", 40}}, 1).ok());
  experiment->RunEnded(1, kExitedZero, 2);
  EXPECT_EQ(experiment->trials().at(1).state, kActive);
  EXPECT_EQ(experiment->trials().at(1).restarts, 1);
  EXPECT_EQ(effects.started, (std::vector<std::string>{"trial-1-1", "trial-1-2"}));
  experiment->RunEnded(1, kExitedZero, 3);
  EXPECT_EQ(experiment->trials().at(1).state, kError) << "past max_restarts";
  EXPECT_EQ(experiment->state(), kError);
}

TEST(ExperimentTest, ClusterFailuresRestartFreeAndOtherFailuresCountUpToMaxRestarts) {
  RecordingEffects effects;
  auto experiment = Make(effects, kSingle, /*max_restarts=*/1);
  experiment->RunEnded(1, kAgentLost, 1);
  EXPECT_EQ(experiment->trials().at(1).restarts, 0);
  experiment->RunEnded(1, kCrashed, 2);
  EXPECT_EQ(experiment->trials().at(1).restarts, 1);
  EXPECT_EQ(effects.started, (std::vector<std::string>{"trial-1-1", "trial-1-2", "trial-1-3"}));
  experiment->RunEnded(1, kCrashed, 3);
  EXPECT_EQ(experiment->trials().at(1).state, kError);
  EXPECT_EQ(experiment->state(), kError) << "every trial failed";
  EXPECT_EQ(experiment->message(), "every trial failed");
}

TEST(ExperimentTest, PauseStopsRunsAndActivateStartsThemAgainWithoutCountingARestart) {
  RecordingEffects effects;
  auto experiment = Make(effects, kSingle);
  ASSERT_EQ(*experiment->Act("pause", 1), kPaused);
  EXPECT_EQ(effects.stopped, std::vector<std::string>{"trial-1-1"});
  EXPECT_EQ(experiment->StopReason(1), "the experiment was paused");
  experiment->RunEnded(1, kExitedZero, 2);  // checkpointed and exited 0: still paused, not done
  EXPECT_EQ(experiment->trials().at(1).state, kPaused);
  ASSERT_EQ(*experiment->Act("activate", 3), kActive);
  EXPECT_EQ(effects.started.back(), "trial-1-2");
  EXPECT_EQ(experiment->trials().at(1).restarts, 0);
  EXPECT_FALSE(experiment->Act("nonsense", 4).ok());
}

TEST(ExperimentTest, ActivatedBeforeThePausedRunEndedStartsItAgainWhenItEnds) {
  RecordingEffects effects;
  auto experiment = Make(effects, kSingle);
  ASSERT_TRUE(experiment->Act("pause", 1).ok());
  ASSERT_TRUE(experiment->Act("activate", 2).ok());
  EXPECT_EQ(effects.started.size(), 1u) << "the stopping run has not ended yet";
  EXPECT_EQ(experiment->StopReason(1), "the experiment was paused");
  experiment->RunEnded(1, kExitedZero, 3);
  EXPECT_EQ(experiment->trials().at(1).state, kActive);
  EXPECT_EQ(effects.started.back(), "trial-1-2");
}

TEST(ExperimentTest, CancelStopsRunsAndEndsCanceledOnceTheyEnd) {
  RecordingEffects effects;
  auto experiment = Make(effects, "{name: random, metric: loss, max_trials: 3, max_length: 10}");
  ASSERT_EQ(effects.started.size(), 3u);
  ASSERT_EQ(*experiment->Act("cancel", 1), kStoppingCanceled);
  EXPECT_EQ(effects.stopped.size(), 3u);
  EXPECT_FALSE(experiment->Act("activate", 1).ok());
  for (int64_t id = 1; id <= 3; ++id) experiment->RunEnded(id, kCrashed, 2);
  EXPECT_EQ(experiment->state(), kCanceled);
  for (const auto& [id, trial] : experiment->trials()) EXPECT_EQ(trial.state, kCanceled);
}

TEST(ExperimentTest, AValidationSentAgainIsNotNewsToTheSearch) {
  RecordingEffects effects;
  auto experiment = Make(effects, kSingle);
  const int writes = effects.experiment_writes;
  ASSERT_TRUE(experiment->Validated(1, 50, {{"loss", 0.5}}, 1).ok());
  EXPECT_EQ(effects.experiment_writes, writes + 1);
  ASSERT_TRUE(experiment->Validated(1, 50, {{"loss", 0.5}}, 2).ok());
  EXPECT_EQ(effects.experiment_writes, writes + 1);
  EXPECT_FALSE(experiment->Validated(1, 60, {{"accuracy", 0.5}}, 3).ok())
      << "the searcher's metric is missing";
}

// The search already counted an early exit when the run was still ending: a master that restores
// the trial from the saved state must close it the same way (ERROR, no restart).
TEST(ExperimentTest, TheSavedStateCarriesEarlyExitsAndStopsForAPause) {
  RecordingEffects effects;
  auto experiment = Make(effects, "{name: random, metric: loss, max_trials: 2, max_length: 10}");
  experiment->ExitedEarly(2, searcher::ExitReason::kInvalidHyperparameters, 1);
  const nlohmann::json saved = experiment->SaveState();
  EXPECT_FALSE(saved["trials"]["1"].contains("exited_early")) << saved.dump();
  EXPECT_EQ(saved["trials"]["2"].value("exited_early", ""), "INVALID_HP") << saved.dump();
  for (auto reason : {searcher::ExitReason::kErrored, searcher::ExitReason::kInvalidHyperparameters,
                      searcher::ExitReason::kUserCanceled}) {
    EXPECT_EQ(ExitReasonNamed(ExitReasonName(reason)), reason);
  }
  EXPECT_EQ(ExitReasonNamed("CRASHED"), std::nullopt);
  EXPECT_FALSE(saved["trials"]["1"].contains("stopped_for_pause")) << saved.dump();
  ASSERT_EQ(*experiment->Act("pause", 2), kPaused);
  EXPECT_TRUE(experiment->SaveState()["trials"]["1"].value("stopped_for_pause", false))
      << "a run still finishing its pause is stopped again, and not counted, after a restore";
}

TEST(ExperimentTest, OnlyAFinishedExperimentMayBeDeletedAndAFailedDeleteMayBeAskedAgain) {
  RecordingEffects effects;
  auto experiment = Make(effects, kSingle);
  auto refused = experiment->Act("delete", 1);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(),
            "cannot delete experiment 1: it is ACTIVE; cancel or kill it first");
  ASSERT_EQ(*experiment->Act("kill", 2), kStoppingKilled);
  EXPECT_FALSE(experiment->Act("delete", 3).ok()) << "a run is still stopping";
  experiment->RunEnded(1, kCrashed, 4);
  ASSERT_EQ(experiment->state(), kCanceled);
  const int writes = effects.experiment_writes;
  ASSERT_EQ(*experiment->Act("delete", 5), kDeleting);
  EXPECT_EQ(effects.experiment_writes, writes + 1) << "DELETING is stored";
  EXPECT_EQ(*experiment->Act("delete", 6), kDeleting) << "asked twice: still deleting";
  EXPECT_FALSE(experiment->Act("activate", 7).ok());
  experiment->DeleteFailed("task checkpoint-gc-1 exited 1");
  EXPECT_EQ(experiment->state(), kDeleteFailed);
  EXPECT_EQ(experiment->message(), "delete failed: task checkpoint-gc-1 exited 1");
  EXPECT_EQ(*experiment->Act("delete", 8), kDeleting);
}

TEST(ExperimentTest, OnlyAFinishedSingleSearchIsContinuedAndAFinishedSearchSaysSo) {
  RecordingEffects effects;
  auto single = Make(effects, kSingle);
  EXPECT_EQ(single->CheckContinuable().code(), StatusCode::kFailedPrecondition) << "still ACTIVE";
  ASSERT_TRUE(single->Validated(1, 100, {{"loss", 0.5}, {"batches", 100}}, 1).ok());
  single->RunEnded(1, kExitedZero, 2);
  EXPECT_TRUE(single->CheckContinuable().ok());

  RecordingEffects random_effects;
  auto random = Make(random_effects,
                     "{name: random, metric: loss, max_trials: 2, max_length: {batches: 10}}");
  for (int64_t trial : {1, 2}) {
    ASSERT_TRUE(random->Validated(trial, 10, {{"loss", 0.5}, {"batches", 10}}, 1).ok());
    random->RunEnded(trial, kExitedZero, 2);
  }
  ASSERT_EQ(random->state(), kCompleted);
  EXPECT_EQ(random->CheckContinuable().message(),
            "experiment has been completed, cannot continue this experiment");
}

}  // namespace
}  // namespace det::master::experiment
