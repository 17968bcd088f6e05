#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "common/config.h"
#include "common/status.h"

namespace det::master::searcher {

// An experiment's `searcher:` (Determined's names and defaults).
struct SearcherConfig {
  std::string name;    // single | random | grid | async_halving | adaptive_asha
  std::string metric;  // the validation metric searched on (required)
  bool smaller_is_better = true;
  int max_trials = 1;             // random, async_halving, adaptive_asha (required there)
  int max_concurrent_trials = 0;  // 0: no limit of the searcher's own (the pool's slots limit)
  // How long each trial trains, in units of `time_metric` (a metric trials report with each
  // validation: batches, records, epochs, ...): `max_time` + `time_metric`, or Determined's older
  // `max_length: {batches: N}` (or a bare N, in batches). For ASHA, the top rung.
  std::string time_metric;
  int64_t max_time = 0;
  double divisor = 4;              // ASHA: each rung keeps 1/divisor of what reaches it
  int num_rungs = 0;               // async_halving (required)
  int max_rungs = 5;               // adaptive_asha
  std::string mode = "standard";   // adaptive_asha: aggressive | standard | conservative
  std::vector<int> bracket_rungs;  // adaptive_asha: explicit brackets (rungs each)
  // Warm starts (at most one of the two): every trial starts from this checkpoint (its
  // latest_checkpoint until it writes one of its own), or from trial `source_trial_id`'s latest.
  std::string source_checkpoint_uuid;
  int64_t source_trial_id = 0;
};

// A training length as Determined writes it, `{batches|records|epochs: N}` with N > 0: the unit
// and N, or InvalidArgument saying what is wrong (no field path: the caller adds it).
Result<std::pair<std::string, int64_t>> ParseLength(const nlohmann::json& length);

// Reads `searcher:` from `reader`, recording each bad field on it (name, value, what is allowed).
SearcherConfig ReadSearcherConfig(ConfigReader& reader);

}  // namespace det::master::searcher
