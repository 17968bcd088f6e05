#include "master/experiments/searcher/adaptive_asha.h"

#include <algorithm>
#include <cmath>

namespace det::master::searcher {
namespace {

// floor(log_d(x)) + 1, counted without floating-point logarithms.
int LevelsUpTo(double x, double d) {
  int levels = 1;
  for (double power = d; power <= x * (1 + 1e-12); power *= d) ++levels;
  return levels;
}

std::vector<int> BracketRungs(const SearcherConfig& config) {
  if (!config.bracket_rungs.empty()) {
    std::vector<int> rungs = config.bracket_rungs;
    std::sort(rungs.rbegin(), rungs.rend());
    return rungs;
  }
  const int most =
      std::min({config.max_rungs, LevelsUpTo(static_cast<double>(config.max_time), config.divisor),
                LevelsUpTo(config.max_trials, config.divisor)});
  int first = 1;
  if (config.mode == "standard") first = (most - 1) / 2 + 1;
  if (config.mode == "aggressive") first = most;
  std::vector<int> rungs;
  for (int r = most; r >= first; --r) rungs.push_back(r);
  return rungs;
}

}  // namespace

std::vector<Bracket> PlanBrackets(const SearcherConfig& config) {
  std::vector<Bracket> plan;
  const double d = config.divisor;
  double total_weight = 0;
  for (int r : BracketRungs(config)) {
    plan.push_back({r, 0, 0});
    total_weight += std::pow(d, r - 1) / r;
  }
  int assigned = 0;
  for (Bracket& bracket : plan) {
    const double share = std::pow(d, bracket.rungs - 1) / bracket.rungs / total_weight;
    bracket.max_trials = std::max(static_cast<int>(std::floor(share * config.max_trials)), 1);
    assigned += bracket.max_trials;
  }
  plan.front().max_trials += std::max(config.max_trials - assigned, 0);
  const int count = static_cast<int>(plan.size());
  if (config.max_concurrent_trials > 0) {
    const int m = std::max(config.max_concurrent_trials, count);
    for (int i = 0; i < count; ++i) plan[i].max_concurrent_trials = m / count + (i < m % count);
  } else {
    const int each = std::max(plan.back().max_trials, static_cast<int>(std::floor(d)));
    for (Bracket& bracket : plan) bracket.max_concurrent_trials = each;
  }
  return plan;
}

AdaptiveAshaSearch::AdaptiveAshaSearch(const SearcherConfig& config) {
  for (const Bracket& bracket : PlanBrackets(config)) {
    SearcherConfig inner = config;
    inner.num_rungs = bracket.rungs;
    inner.max_trials = bracket.max_trials;
    inner.max_concurrent_trials = bracket.max_concurrent_trials;
    brackets_.push_back(std::make_unique<AshaSearch>(inner));
  }
}

std::vector<Operation> AdaptiveAshaSearch::Owned(size_t bracket,
                                                 std::vector<Operation> operations) {
  for (const Operation& op : operations) {
    if (const auto* create = std::get_if<Create>(&op)) owner_[create->request_id] = bracket;
  }
  return operations;
}

int AdaptiveAshaSearch::BracketOf(int64_t request_id) const {
  auto it = owner_.find(request_id);
  return it == owner_.end() ? -1 : static_cast<int>(it->second);
}

std::vector<Operation> AdaptiveAshaSearch::Initial(SearchContext& context) {
  std::vector<Operation> operations;
  for (size_t i = 0; i < brackets_.size(); ++i) {
    for (Operation& op : Owned(i, brackets_[i]->Initial(context))) {
      operations.push_back(std::move(op));
    }
  }
  return operations;
}

Result<std::vector<Operation>> AdaptiveAshaSearch::Validated(SearchContext& context,
                                                             int64_t request_id,
                                                             const nlohmann::json& metrics) {
  const int bracket = BracketOf(request_id);
  if (bracket < 0) return std::vector<Operation>{};
  DET_ASSIGN_OR_RETURN(
      std::vector<Operation> operations,
      brackets_[static_cast<size_t>(bracket)]->Validated(context, request_id, metrics));
  return Owned(static_cast<size_t>(bracket), std::move(operations));
}

std::vector<Operation> AdaptiveAshaSearch::ExitedEarly(SearchContext& context, int64_t request_id,
                                                       ExitReason reason) {
  const int bracket = BracketOf(request_id);
  if (bracket < 0) return {};
  const auto b = static_cast<size_t>(bracket);
  return Owned(b, brackets_[b]->ExitedEarly(context, request_id, reason));
}

std::vector<Operation> AdaptiveAshaSearch::Closed(SearchContext& context, int64_t request_id) {
  const int bracket = BracketOf(request_id);
  if (bracket < 0) return {};
  const auto b = static_cast<size_t>(bracket);
  return Owned(b, brackets_[b]->Closed(context, request_id));
}

nlohmann::json AdaptiveAshaSearch::Save() const {
  nlohmann::json brackets = nlohmann::json::array();
  for (const auto& bracket : brackets_) brackets.push_back(bracket->Save());
  return {{"owner", owner_}, {"brackets", brackets}};
}

Status AdaptiveAshaSearch::Load(const nlohmann::json& state) {
  if (!state.is_object() || !state["brackets"].is_array() ||
      state["brackets"].size() != brackets_.size()) {
    return InvalidArgument("adaptive ASHA state does not match its " +
                           std::to_string(brackets_.size()) + " brackets");
  }
  try {
    owner_ = state.at("owner").get<std::map<int64_t, size_t>>();
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument(std::string("adaptive ASHA state: ") + e.what());
  }
  for (size_t i = 0; i < brackets_.size(); ++i) {
    DET_RETURN_IF_ERROR(brackets_[i]->Load(state["brackets"][i]));
  }
  return Status::Ok();
}

}  // namespace det::master::searcher
