#pragma once

#include <nlohmann/json.hpp>

#include "bus/catalog/experiments.h"

namespace det::bus {

// The JSON forms of experiments and trials that `det --json` prints and the REST API answers
// (hyperparameters and best validation as JSON objects, not text).
nlohmann::ordered_json ToJson(const ExperimentSummary& experiment);
nlohmann::ordered_json ToJson(const TrialSummary& trial);
// {"experiment": ..., "trials": [...], "config": "<yaml>"}
nlohmann::ordered_json ToJson(const ExperimentGetReply& reply);
nlohmann::ordered_json ToJson(const CheckpointSummary& checkpoint);

}  // namespace det::bus
