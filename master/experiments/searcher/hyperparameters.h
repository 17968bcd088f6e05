#pragma once

#include <yaml-cpp/yaml.h>

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "master/experiments/searcher/rng.h"

namespace det::master::searcher {

// One entry of an experiment's `hyperparameters` (Determined's types).
struct Hyperparameter {
  enum class Type { kConst, kInt, kDouble, kLog, kCategorical, kNested };
  Type type = Type::kConst;
  nlohmann::json val;                            // const (a bare value in the config is a const)
  double minval = 0, maxval = 0;                 // int, double; log: exponents
  double base = 10;                              // log
  std::optional<int> count;                      // int, double, log: grid points
  std::vector<nlohmann::json> vals;              // categorical
  std::map<std::string, Hyperparameter> nested;  // a mapping without `type`
};

// Names in sorted order (so sampling and grids draw in a fixed order).
using Hyperparameters = std::map<std::string, Hyperparameter>;

// Reads `hyperparameters:`; InvalidArgument naming each bad field ("hyperparameters.lr.maxval:
// must not be less than minval (0.1)"), unknown fields included.
Result<Hyperparameters> ParseHyperparameters(const YAML::Node& node);
// The same, appending each problem (already naming its field) to `errors`.
Hyperparameters ParseHyperparameters(const YAML::Node& node, std::vector<std::string>* errors);

// A random sample: int uniform in [minval, maxval], double in [minval, maxval), log base^x with x
// in [minval, maxval), categorical one of vals; nested groups as objects. Draws in name order.
nlohmann::json Sample(const Hyperparameters& hparams, SearchRng& rng);

// Every grid point: each numeric hyperparameter takes `count` evenly spaced values with both ends
// (int: rounded, count at most maxval - minval + 1; count 1: the middle), categorical all its
// values, const its value; the points are the product with the first name outermost.
// InvalidArgument naming each numeric hyperparameter without `count`.
Result<std::vector<nlohmann::json>> GridPoints(const Hyperparameters& hparams);

}  // namespace det::master::searcher
