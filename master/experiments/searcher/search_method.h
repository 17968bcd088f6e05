#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <variant>
#include <vector>

#include "common/status.h"
#include "master/experiments/searcher/hyperparameters.h"
#include "master/experiments/searcher/rng.h"
#include "master/experiments/searcher/searcher_config.h"

namespace det::master::searcher {

// What a search asks of the experiment.
struct Create {            // start a trial with these hyperparameters
  int64_t request_id = 0;  // the search's name for the trial, from 1 up
  nlohmann::json hparams;
  uint32_t trial_seed = 0;
  bool operator==(const Create&) const = default;
};
struct Stop {  // the trial has trained enough for the search: let it end
  int64_t request_id = 0;
  bool operator==(const Stop&) const = default;
};
struct Shutdown {        // every trial asked for has closed
  bool failure = false;  // every trial failed
  bool cancel = false;   // every trial was canceled
  bool operator==(const Shutdown&) const = default;
};
using Operation = std::variant<Create, Stop, Shutdown>;

// Why a trial ended before the search let it.
enum class ExitReason { kErrored, kInvalidHyperparameters, kUserCanceled };

// What a search method draws on: the random numbers and hyperparameters of the experiment, and
// the next request id.
struct SearchContext {
  SearchRng& rng;
  const Hyperparameters& hparams;
  int64_t& last_request_id;
  // A new trial with sampled hyperparameters (then its seed: the draws come in this order).
  Create NewTrial();
  Create NewTrial(nlohmann::json hparams);
};

// One search algorithm as a state machine: events in, operations out. Deterministic given the
// context's random numbers. Save()/Load() carry its whole state across a master restart.
class SearchMethod {
 public:
  virtual ~SearchMethod() = default;
  virtual std::vector<Operation> Initial(SearchContext& context) = 0;
  virtual void Created(int64_t /*request_id*/) {}
  // InvalidArgument when the metrics lack what the method needs (naming it).
  virtual Result<std::vector<Operation>> Validated(SearchContext& context, int64_t request_id,
                                                   const nlohmann::json& metrics) = 0;
  virtual std::vector<Operation> ExitedEarly(SearchContext& context, int64_t request_id,
                                             ExitReason reason) = 0;
  virtual std::vector<Operation> Closed(SearchContext& context, int64_t request_id) = 0;
  virtual nlohmann::json Save() const = 0;
  virtual Status Load(const nlohmann::json& state) = 0;
};

}  // namespace det::master::searcher
