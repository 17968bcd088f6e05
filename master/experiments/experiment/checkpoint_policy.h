#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "master/experiments/experiment/experiment_config.h"

namespace det::master::experiment {

// A checkpoint as the policy sees it: its trial, its step, and the searcher metric of the
// trial's validation at that step (none: it cannot be anyone's best).
struct CheckpointScore {
  std::string uuid;
  int64_t trial_id = 0;
  int64_t steps_completed = 0;
  std::optional<double> metric;
};

// Determined's checkpoint garbage collection: a checkpoint is kept while it is one of its trial's
// `save_trial_latest` latest, one of its trial's `save_trial_best` best, or one of the
// experiment's `save_experiment_best` best (by the searcher metric, `smaller_is_better`).
// Returns the uuids of the checkpoints of `ended_trials` that none of these keep; checkpoints of
// other trials (still running: they resume from them) are always kept.
//
// Safe to apply while other trials run: a checkpoint outside the experiment's best now cannot
// enter it later, since new checkpoints only push it further down.
std::vector<std::string> CheckpointsToDelete(const std::vector<CheckpointScore>& checkpoints,
                                             const CheckpointStorage& policy,
                                             bool smaller_is_better,
                                             const std::set<int64_t>& ended_trials);

}  // namespace det::master::experiment
