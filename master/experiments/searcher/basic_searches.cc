#include "master/experiments/searcher/basic_searches.h"

#include <algorithm>

namespace det::master::searcher {

std::vector<Operation> RandomSearch::Initial(SearchContext& context) {
  const int count = config_.max_concurrent_trials > 0
                        ? std::min(config_.max_trials, config_.max_concurrent_trials)
                        : config_.max_trials;
  std::vector<Operation> operations;
  for (int i = 0; i < count; ++i) {
    operations.push_back(context.NewTrial());
    ++created_;
  }
  return operations;
}

std::vector<Operation> RandomSearch::Next(SearchContext& context) {
  if (created_ >= config_.max_trials) return {};
  ++created_;
  return {context.NewTrial()};
}

std::vector<Operation> RandomSearch::ExitedEarly(SearchContext&, int64_t, ExitReason reason) {
  if (reason == ExitReason::kInvalidHyperparameters) --created_;  // its replacement is free
  return {};  // the replacement comes when it closes
}

std::vector<Operation> RandomSearch::Closed(SearchContext& context, int64_t) {
  return Next(context);
}

nlohmann::json RandomSearch::Save() const { return {{"created", created_}}; }

Status RandomSearch::Load(const nlohmann::json& state) {
  if (!state.is_object() || !state.contains("created")) {
    return InvalidArgument("random search state lacks \"created\"");
  }
  created_ = state["created"].get<int>();
  return Status::Ok();
}

std::vector<Operation> GridSearch::Initial(SearchContext& context) {
  const size_t count =
      config_.max_concurrent_trials > 0
          ? std::min(remaining_.size(), static_cast<size_t>(config_.max_concurrent_trials))
          : remaining_.size();
  std::vector<Operation> operations;
  for (size_t i = 0; i < count; ++i) {
    for (Operation& op : Next(context)) operations.push_back(std::move(op));
  }
  return operations;
}

std::vector<Operation> GridSearch::Next(SearchContext& context) {
  if (remaining_.empty()) return {};
  nlohmann::json point = std::move(remaining_.back());
  remaining_.pop_back();
  return {context.NewTrial(std::move(point))};
}

nlohmann::json GridSearch::Save() const { return {{"remaining", remaining_}}; }

Status GridSearch::Load(const nlohmann::json& state) {
  if (!state.is_object() || !state["remaining"].is_array()) {
    return InvalidArgument("grid search state lacks \"remaining\"");
  }
  remaining_ = state["remaining"].get<std::vector<nlohmann::json>>();
  return Status::Ok();
}

}  // namespace det::master::searcher
