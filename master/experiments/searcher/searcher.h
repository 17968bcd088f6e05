#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "master/experiments/searcher/search_method.h"

namespace det::master::searcher {

// An experiment's search: the method its config names (single, random, grid, async_halving,
// adaptive_asha), its random numbers (seeded from the experiment seed) and the bookkeeping that
// decides when it is over: once every trial asked for has closed, it asks for Shutdown (a
// failure when every trial failed, a cancel when every one was canceled).
//
// The experiment reports each trial's life: TrialCreated, ValidationCompleted (its metrics),
// TrialExitedEarly (then TrialClosed), TrialClosed. Every call returns what to do next. Given the
// same seed and the same events, the same operations come out; Save() captures everything, and
// Restore() continues exactly where it stood.
//
// Threading: not thread-safe; owned by the experiment.
class Searcher {
 public:
  // InvalidArgument for a grid without counts.
  static Result<std::unique_ptr<Searcher>> Make(const SearcherConfig& config,
                                                Hyperparameters hparams, uint32_t seed);
  // A searcher as Save() left it (with the experiment's config and hyperparameters).
  static Result<std::unique_ptr<Searcher>> Restore(const SearcherConfig& config,
                                                   Hyperparameters hparams,
                                                   const nlohmann::json& saved);

  std::vector<Operation> Start();
  std::vector<Operation> TrialCreated(int64_t request_id);
  Result<std::vector<Operation>> ValidationCompleted(int64_t request_id,
                                                     const nlohmann::json& metrics);
  std::vector<Operation> TrialExitedEarly(int64_t request_id, ExitReason reason);
  std::vector<Operation> TrialClosed(int64_t request_id);

  nlohmann::json Save() const;

  // For Continue (Determined's ContinueExperiment) of a single search's finished experiment: its
  // one trial is open again as if it had never closed (its failure or cancel no longer counted;
  // a killed experiment's trial may never have been closed for the search) and the search is no
  // longer over. FailedPrecondition for any other search.
  Status ReopenSingleTrial();

 private:
  Searcher(const SearcherConfig& config, Hyperparameters hparams, uint32_t seed,
           std::unique_ptr<SearchMethod> method);
  // Counts the creates and adds Shutdown once the last trial asked for has closed.
  std::vector<Operation> Track(std::vector<Operation> operations);
  SearchContext Context() { return {rng_, hparams_, last_request_id_}; }

  SearcherConfig config_;
  Hyperparameters hparams_;
  SearchRng rng_;
  std::unique_ptr<SearchMethod> method_;
  int64_t last_request_id_ = 0;
  int requested_ = 0, closed_ = 0, failures_ = 0, cancels_ = 0;
  bool shut_down_ = false;
};

}  // namespace det::master::searcher
