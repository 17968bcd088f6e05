#include "master/experiments/searcher/asha_search.h"

#include <algorithm>
#include <cfloat>
#include <cmath>

namespace det::master::searcher {

AshaSearch::AshaSearch(const SearcherConfig& config) : config_(config) {
  const int rungs = std::max(config.num_rungs, 1);
  for (int k = 0; k < rungs; ++k) {
    const double units =
        std::floor(static_cast<double>(config.max_time) / std::pow(config.divisor, rungs - 1 - k));
    units_.push_back(std::max<int64_t>(static_cast<int64_t>(units), 1));
  }
  rungs_.resize(units_.size());
}

std::vector<Operation> AshaSearch::Initial(SearchContext& context) {
  int count = config_.max_concurrent_trials > 0
                  ? std::min(config_.max_concurrent_trials, config_.max_trials)
                  : std::clamp(static_cast<int>(std::floor(std::pow(
                                   config_.divisor, static_cast<double>(units_.size()) - 1))),
                               1, config_.max_trials);
  std::vector<Operation> operations;
  while (count-- > 0) {
    for (Operation& op : MaybeCreate(context)) operations.push_back(std::move(op));
  }
  return operations;
}

std::vector<Operation> AshaSearch::MaybeCreate(SearchContext& context) {
  if (requested_ - invalid_ >= config_.max_trials) return {};
  ++requested_;
  Create create = context.NewTrial();
  trial_rung_[create.request_id] = 0;
  return {std::move(create)};
}

size_t AshaSearch::Record(size_t rung, int64_t request_id, double metric) {
  auto& results = rungs_[rung];
  auto at = std::lower_bound(results.begin(), results.end(), metric,
                             [](const auto& entry, double m) { return entry.first < m; });
  const auto position = static_cast<size_t>(at - results.begin());
  results.insert(at, {metric, request_id});
  return position;
}

std::vector<Operation> AshaSearch::StopAndReplace(SearchContext& context, int64_t request_id) {
  stopped_.insert(request_id);
  std::vector<Operation> operations = {Stop{request_id}};
  for (Operation& op : MaybeCreate(context)) operations.push_back(std::move(op));
  return operations;
}

Result<std::vector<Operation>> AshaSearch::Validated(SearchContext& context, int64_t request_id,
                                                     const nlohmann::json& metrics) {
  if (stopped_.count(request_id)) return std::vector<Operation>{};
  for (const std::string& name : {config_.metric, config_.time_metric}) {
    if (!metrics.is_object() || !metrics.contains(name) || !metrics[name].is_number()) {
      return InvalidArgument("validation metrics lack \"" + name +
                             "\" (a number), which the searcher needs");
    }
  }
  double metric = metrics[config_.metric].get<double>();
  if (!config_.smaller_is_better) metric = -metric;
  const auto trained = static_cast<int64_t>(metrics[config_.time_metric].get<double>());
  size_t rung = trial_rung_[request_id];
  while (true) {
    if (trained < units_[rung]) {
      trial_rung_[request_id] = rung;
      return std::vector<Operation>{};
    }
    const size_t position = Record(rung, request_id, metric);
    if (rung + 1 == units_.size()) break;
    const size_t keep = std::max<size_t>(
        static_cast<size_t>(std::floor(static_cast<double>(rungs_[rung].size()) / config_.divisor)),
        1);
    if (position >= keep) break;
    ++rung;
  }
  trial_rung_[request_id] = rung;
  return StopAndReplace(context, request_id);
}

std::vector<Operation> AshaSearch::ExitedEarly(SearchContext& context, int64_t request_id,
                                               ExitReason reason) {
  if (stopped_.count(request_id)) return {};
  stopped_.insert(request_id);
  if (reason == ExitReason::kInvalidHyperparameters) {
    for (auto& results : rungs_) {
      std::erase_if(results, [&](const auto& entry) { return entry.second == request_id; });
    }
    ++invalid_;
    return MaybeCreate(context);
  }
  Record(trial_rung_[request_id], request_id, DBL_MAX);
  return MaybeCreate(context);
}

std::vector<int64_t> AshaSearch::RungTrials(size_t k) const {
  std::vector<int64_t> ids;
  for (const auto& [metric, id] : rungs_.at(k)) ids.push_back(id);
  return ids;
}

nlohmann::json AshaSearch::Save() const {
  nlohmann::json rungs = nlohmann::json::array();
  for (const auto& results : rungs_) rungs.push_back(results);
  return {{"rungs", rungs},
          {"trial_rung", trial_rung_},
          {"stopped", stopped_},
          {"requested", requested_},
          {"invalid", invalid_}};
}

Status AshaSearch::Load(const nlohmann::json& state) {
  try {
    const auto& rungs = state.at("rungs");
    if (rungs.size() != rungs_.size()) {
      return InvalidArgument("ASHA state has " + std::to_string(rungs.size()) + " rungs, not " +
                             std::to_string(rungs_.size()));
    }
    for (size_t k = 0; k < rungs_.size(); ++k) {
      rungs_[k] = rungs[k].get<std::vector<std::pair<double, int64_t>>>();
    }
    trial_rung_ = state.at("trial_rung").get<std::map<int64_t, size_t>>();
    stopped_ = state.at("stopped").get<std::set<int64_t>>();
    requested_ = state.at("requested").get<int>();
    invalid_ = state.at("invalid").get<int>();
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument(std::string("ASHA state: ") + e.what());
  }
  return Status::Ok();
}

}  // namespace det::master::searcher
