// Checkpoint garbage collection by the save_* policy: which checkpoints go when trials end.
#include "master/experiments/experiment/checkpoint_policy.h"

#include <gtest/gtest.h>

namespace det::master::experiment {
namespace {

CheckpointStorage Policy(int experiment_best, int trial_best, int trial_latest) {
  CheckpointStorage policy;
  policy.save_experiment_best = experiment_best;
  policy.save_trial_best = trial_best;
  policy.save_trial_latest = trial_latest;
  return policy;
}

// Trial 1: losses 0.9 (step 10), 0.5 (20), 0.7 (30). Trial 2: 0.6 (10), 0.4 (20), none (30).
const std::vector<CheckpointScore> kCheckpoints = {
    {"1a", 1, 10, 0.9}, {"1b", 1, 20, 0.5}, {"1c", 1, 30, 0.7},
    {"2a", 2, 10, 0.6}, {"2b", 2, 20, 0.4}, {"2c", 2, 30, std::nullopt},
};

using Uuids = std::vector<std::string>;

TEST(CheckpointPolicyTest, DeterminedsDefaultsKeepEachTrialsBestAndLatest) {
  EXPECT_EQ(CheckpointsToDelete(kCheckpoints, Policy(0, 1, 1), true, {1, 2}), (Uuids{"1a", "2a"}));
}

TEST(CheckpointPolicyTest, ExperimentBestKeepsTheBestAcrossTrials) {
  EXPECT_EQ(CheckpointsToDelete(kCheckpoints, Policy(2, 0, 0), true, {1, 2}),
            (Uuids{"1a", "1c", "2a", "2c"}))
      << "0.4 and 0.5 are the experiment's two best";
  EXPECT_EQ(CheckpointsToDelete(kCheckpoints, Policy(1, 0, 0), false, {1, 2}),
            (Uuids{"1b", "1c", "2a", "2b", "2c"}))
      << "larger is better: 0.9 is the best";
}

TEST(CheckpointPolicyTest, ACheckpointWithoutAValidationIsNobodysBestButCanBeLatest) {
  EXPECT_EQ(CheckpointsToDelete(kCheckpoints, Policy(0, 1, 0), true, {2}), (Uuids{"2a", "2c"}));
  EXPECT_EQ(CheckpointsToDelete(kCheckpoints, Policy(0, 0, 1), true, {2}), (Uuids{"2a", "2b"}));
}

TEST(CheckpointPolicyTest, ATrialStillRunningKeepsEveryCheckpoint) {
  EXPECT_EQ(CheckpointsToDelete(kCheckpoints, Policy(0, 0, 0), true, {1}),
            (Uuids{"1a", "1b", "1c"}));
  EXPECT_TRUE(CheckpointsToDelete(kCheckpoints, Policy(0, 0, 0), true, {}).empty());
}

TEST(CheckpointPolicyTest, NothingIsDeletedThatALaterCollectionWouldKeep) {
  // Collected while trial 2 runs, then again when it has ended: the first deletes a subset.
  const CheckpointStorage policy = Policy(2, 1, 1);
  std::vector<CheckpointScore> partial = {kCheckpoints.begin(), kCheckpoints.begin() + 4};
  const Uuids early = CheckpointsToDelete(partial, policy, true, {1});
  const Uuids late = CheckpointsToDelete(kCheckpoints, policy, true, {1, 2});
  for (const std::string& uuid : early) {
    EXPECT_NE(std::find(late.begin(), late.end(), uuid), late.end()) << uuid;
  }
}

}  // namespace
}  // namespace det::master::experiment
