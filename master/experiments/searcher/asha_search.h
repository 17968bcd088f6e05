#pragma once

#include <map>
#include <set>
#include <vector>

#include "master/experiments/searcher/search_method.h"

namespace det::master::searcher {

// `async_halving` as Determined runs it now: asynchronous successive halving by early stopping.
//
// Rung k (of num_rungs) sits at max(floor(max_time / divisor^(num_rungs-1-k)), 1) units of
// time_metric; the top rung at max_time. Every trial trains towards max_time and reports
// validations carrying the searcher's metric and time_metric. A validation walks the trial up
// from its rung: while it has trained at least the rung's units, its metric joins that rung's
// sorted results (before equal ones); it goes on only while it ranks within the best
// max(floor(results / divisor), 1) there, and is stopped otherwise, or at the top rung. Each stop
// starts a new trial while fewer than max_trials have been asked for (trials that exit with
// invalid hyperparameters do not count). It starts with min(max_concurrent_trials, max_trials)
// trials, or without a limit clamp(floor(divisor^(num_rungs-1)), 1, max_trials).
//
// Larger-is-better metrics are negated, so smaller always ranks first. A trial that exits early
// counts as the worst result at its rung (with invalid hyperparameters, its results are removed).
class AshaSearch : public SearchMethod {
 public:
  explicit AshaSearch(const SearcherConfig& config);

  std::vector<Operation> Initial(SearchContext& context) override;
  Result<std::vector<Operation>> Validated(SearchContext& context, int64_t request_id,
                                           const nlohmann::json& metrics) override;
  std::vector<Operation> ExitedEarly(SearchContext& context, int64_t request_id,
                                     ExitReason reason) override;
  std::vector<Operation> Closed(SearchContext&, int64_t) override { return {}; }
  nlohmann::json Save() const override;
  Status Load(const nlohmann::json& state) override;

  const std::vector<int64_t>& rung_units() const { return units_; }
  // Request ids in rung k, best first.
  std::vector<int64_t> RungTrials(size_t k) const;

 private:
  // Inserts before equal values; the position.
  size_t Record(size_t rung, int64_t request_id, double metric);
  std::vector<Operation> StopAndReplace(SearchContext& context, int64_t request_id);
  std::vector<Operation> MaybeCreate(SearchContext& context);

  SearcherConfig config_;
  std::vector<int64_t> units_;                                  // per rung
  std::vector<std::vector<std::pair<double, int64_t>>> rungs_;  // sorted (metric, request id)
  std::map<int64_t, size_t> trial_rung_;
  std::set<int64_t> stopped_;
  int requested_ = 0;
  int invalid_ = 0;
};

}  // namespace det::master::searcher
