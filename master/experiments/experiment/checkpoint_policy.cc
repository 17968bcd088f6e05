#include "master/experiments/experiment/checkpoint_policy.h"

#include <algorithm>
#include <map>

namespace det::master::experiment {
namespace {

using Scores = std::vector<const CheckpointScore*>;

// Adds the uuids of the first `count` of `ordered` to `kept`.
void KeepFirst(const Scores& ordered, int count, std::set<std::string>* kept) {
  for (size_t i = 0; i < ordered.size() && i < static_cast<size_t>(std::max(count, 0)); ++i) {
    kept->insert(ordered[i]->uuid);
  }
}

// Those of `all` with a metric, best first (ties: the later step first).
Scores Best(const Scores& all, bool smaller_is_better) {
  Scores scored;
  std::copy_if(all.begin(), all.end(), std::back_inserter(scored),
               [](const CheckpointScore* c) { return c->metric.has_value(); });
  std::stable_sort(scored.begin(), scored.end(),
                   [&](const CheckpointScore* a, const CheckpointScore* b) {
                     const double x = *a->metric;
                     const double y = *b->metric;
                     if (x != y) return smaller_is_better ? x < y : x > y;
                     return a->steps_completed > b->steps_completed;
                   });
  return scored;
}

Scores Latest(Scores all) {
  std::stable_sort(all.begin(), all.end(), [](const CheckpointScore* a, const CheckpointScore* b) {
    return a->steps_completed > b->steps_completed;
  });
  return all;
}

}  // namespace

std::vector<std::string> CheckpointsToDelete(const std::vector<CheckpointScore>& checkpoints,
                                             const CheckpointStorage& policy,
                                             bool smaller_is_better,
                                             const std::set<int64_t>& ended_trials) {
  Scores all;
  std::map<int64_t, Scores> by_trial;
  for (const CheckpointScore& checkpoint : checkpoints) {
    all.push_back(&checkpoint);
    by_trial[checkpoint.trial_id].push_back(&checkpoint);
  }
  std::set<std::string> kept;
  KeepFirst(Best(all, smaller_is_better), policy.save_experiment_best, &kept);
  for (const auto& [trial_id, own] : by_trial) {
    KeepFirst(Best(own, smaller_is_better), policy.save_trial_best, &kept);
    KeepFirst(Latest(own), policy.save_trial_latest, &kept);
  }
  std::vector<std::string> deleted;
  for (const CheckpointScore& checkpoint : checkpoints) {
    if (ended_trials.count(checkpoint.trial_id) && !kept.count(checkpoint.uuid)) {
      deleted.push_back(checkpoint.uuid);
    }
  }
  return deleted;
}

}  // namespace det::master::experiment
