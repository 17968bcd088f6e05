#pragma once

#include <map>
#include <memory>
#include <vector>

#include "master/experiments/searcher/asha_search.h"

namespace det::master::searcher {

// The brackets of an adaptive search: rungs, trials and concurrency of each.
struct Bracket {
  int rungs = 0;
  int max_trials = 0;
  int max_concurrent_trials = 0;
  bool operator==(const Bracket&) const = default;
};

// Determined's bracket plan. Rungs: `bracket_rungs` if given; else with R = min(max_rungs,
// floor(log_d max_time) + 1, floor(log_d max_trials) + 1), conservative [1..R], standard
// [floor((R-1)/2)+1 .. R], aggressive [R]; most rungs first. Trials: weight d^(r-1)/r each,
// floor(weight share x max_trials) but at least 1, the rest to the first bracket. Concurrency:
// with max_concurrent_trials m > 0, max(m, brackets) split evenly (the first ones get the
// remainder); without, max(trials of the last bracket, floor(d)) each.
std::vector<Bracket> PlanBrackets(const SearcherConfig& config);

// `adaptive_asha`: one AshaSearch per bracket (PlanBrackets), sharing the random numbers; each
// trial's events go to the bracket that created it.
class AdaptiveAshaSearch : public SearchMethod {
 public:
  explicit AdaptiveAshaSearch(const SearcherConfig& config);

  std::vector<Operation> Initial(SearchContext& context) override;
  Result<std::vector<Operation>> Validated(SearchContext& context, int64_t request_id,
                                           const nlohmann::json& metrics) override;
  std::vector<Operation> ExitedEarly(SearchContext& context, int64_t request_id,
                                     ExitReason reason) override;
  std::vector<Operation> Closed(SearchContext& context, int64_t request_id) override;
  nlohmann::json Save() const override;
  Status Load(const nlohmann::json& state) override;

 private:
  // The bracket that created the trial, or -1.
  int BracketOf(int64_t request_id) const;
  // Notes which bracket made each Create in `operations`.
  std::vector<Operation> Owned(size_t bracket, std::vector<Operation> operations);

  std::vector<std::unique_ptr<AshaSearch>> brackets_;
  std::map<int64_t, size_t> owner_;
};

}  // namespace det::master::searcher
