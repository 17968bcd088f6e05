#include "master/experiments/searcher/searcher_config.h"

#include <algorithm>
#include <tuple>

#include "common/yaml_json.h"

namespace det::master::searcher {
namespace {

constexpr const char* kSearchers[] = {"single", "random", "grid", "async_halving", "adaptive_asha"};
constexpr const char* kModes[] = {"aggressive", "standard", "conservative"};
constexpr const char* kLengthUnits[] = {"batches", "records", "epochs"};

// Determined's older `max_length`: {batches|records|epochs: N}, or a bare N (batches).
void ReadMaxLength(ConfigReader& reader, SearcherConfig* config) {
  nlohmann::json length = YamlToJson(reader.Raw("max_length"));
  if (length.is_null()) return;
  if (length.is_number_integer()) length = {{"batches", length}};
  auto parsed = ParseLength(length);
  if (!parsed.ok()) return reader.Fail("max_length", parsed.status().message());
  std::tie(config->time_metric, config->max_time) = *parsed;
  reader.Warn("max_length",
              "is deprecated (Determined 0.38); write time_metric: " + config->time_metric +
                  " and max_time: " + std::to_string(config->max_time) +
                  " (trials must then report " + config->time_metric +
                  " with their validation metrics)");
}

void ReadBrackets(ConfigReader& reader, SearcherConfig* config) {
  const nlohmann::json rungs = YamlToJson(reader.Raw("bracket_rungs"));
  if (rungs.is_null()) return;
  if (!rungs.is_array()) return reader.Fail("bracket_rungs", "must be a list of rung counts");
  for (const auto& r : rungs) {
    if (!r.is_number_integer() || r.get<int64_t>() < 1) {
      return reader.Fail("bracket_rungs", "each must be a positive integer, not " + r.dump());
    }
    config->bracket_rungs.push_back(static_cast<int>(r.get<int64_t>()));
  }
}

void Require(ConfigReader& reader, bool present, const char* field, const std::string& name) {
  if (!present) reader.Fail(field, "is required for searcher " + name);
}

}  // namespace

Result<std::pair<std::string, int64_t>> ParseLength(const nlohmann::json& length) {
  if (!length.is_object() || length.size() != 1 || !length.begin()->is_number_integer() ||
      length.begin()->get<int64_t>() < 1) {
    return InvalidArgument("must be {batches|records|epochs: count > 0}, not " + length.dump());
  }
  const std::string unit = length.begin().key();
  if (std::find(std::begin(kLengthUnits), std::end(kLengthUnits), unit) == std::end(kLengthUnits)) {
    return InvalidArgument("unit \"" + unit +
                           "\" is not allowed; allowed: batches, records, epochs");
  }
  return std::pair{unit, length.begin()->get<int64_t>()};
}

SearcherConfig ReadSearcherConfig(ConfigReader& reader) {
  SearcherConfig config;
  reader.ReadOneOf("name", &config.name, kSearchers);
  if (config.name.empty()) {
    reader.Fail("name", "is required (single, random, grid, async_halving or adaptive_asha)");
  }
  reader.Read("metric", &config.metric);
  if (config.metric.empty()) reader.Fail("metric", "is required");
  reader.Read("smaller_is_better", &config.smaller_is_better);
  const bool has_trials = reader.Has("max_trials");
  reader.ReadInt("max_trials", &config.max_trials, 1, 1000000);
  reader.ReadInt("max_concurrent_trials", &config.max_concurrent_trials, 0, 1000000);
  reader.Read("time_metric", &config.time_metric);
  reader.ReadInt("max_time", &config.max_time, 1, int64_t{1} << 50);
  ReadMaxLength(reader, &config);
  const bool has_length = config.max_time > 0 && !config.time_metric.empty();
  reader.ReadOneOf("mode", &config.mode, kModes);
  reader.Read("divisor", &config.divisor);
  if (!(config.divisor > 1)) reader.Fail("divisor", "must be more than 1");
  reader.ReadInt("num_rungs", &config.num_rungs, 1, 64);
  reader.ReadInt("max_rungs", &config.max_rungs, 1, 64);
  ReadBrackets(reader, &config);
  // Determined 0.38: single, random and grid need no length (a trial runs until its code ends);
  // the ASHA searchers place their rungs on time_metric up to max_time.
  const bool asha = config.name == "async_halving" || config.name == "adaptive_asha";
  if (asha) Require(reader, has_length, "max_time", config.name + " (with time_metric)");
  if (!asha && config.max_time > 0 && config.time_metric.empty()) {
    reader.Fail("time_metric", "is required with max_time: the validation metric that counts it");
  }
  reader.Read("source_checkpoint_uuid", &config.source_checkpoint_uuid);
  reader.ReadInt("source_trial_id", &config.source_trial_id, 1, int64_t{1} << 62);
  if (!config.source_checkpoint_uuid.empty() && config.source_trial_id > 0) {
    reader.Fail("source_trial_id", "and source_checkpoint_uuid are exclusive: give one");
  }
  reader.Ignore({"stop_once"}, "deprecated in Determined 0.38");
  if (config.name == "random" || config.name == "async_halving" || config.name == "adaptive_asha") {
    Require(reader, has_trials, "max_trials", config.name);
  }
  if (config.name == "async_halving")
    Require(reader, config.num_rungs > 0, "num_rungs", config.name);
  if (config.name == "single") config.max_trials = 1;
  return config;
}

}  // namespace det::master::searcher
