#pragma once

#include <vector>

#include "master/experiments/searcher/search_method.h"

namespace det::master::searcher {

// `random` (and `single`: one trial): max_trials trials of sampled hyperparameters, at most
// max_concurrent_trials at once (0: all at once); each trial that closes makes room for the next.
// A trial that exits with invalid hyperparameters does not count against max_trials. (A trial
// that ends early is reported ExitedEarly, then Closed.)
class RandomSearch : public SearchMethod {
 public:
  explicit RandomSearch(const SearcherConfig& config) : config_(config) {}
  std::vector<Operation> Initial(SearchContext& context) override;
  Result<std::vector<Operation>> Validated(SearchContext&, int64_t,
                                           const nlohmann::json&) override {
    return std::vector<Operation>{};
  }
  std::vector<Operation> ExitedEarly(SearchContext& context, int64_t request_id,
                                     ExitReason reason) override;
  std::vector<Operation> Closed(SearchContext& context, int64_t request_id) override;
  nlohmann::json Save() const override;
  Status Load(const nlohmann::json& state) override;

 private:
  std::vector<Operation> Next(SearchContext& context);
  SearcherConfig config_;
  int created_ = 0;
};

// `grid`: one trial per grid point (GridPoints), taken from the end of the list, at most
// max_concurrent_trials at once (0: all at once); each trial that closes makes room for the next.
class GridSearch : public SearchMethod {
 public:
  GridSearch(const SearcherConfig& config, std::vector<nlohmann::json> points)
      : config_(config), remaining_(std::move(points)) {}
  std::vector<Operation> Initial(SearchContext& context) override;
  Result<std::vector<Operation>> Validated(SearchContext&, int64_t,
                                           const nlohmann::json&) override {
    return std::vector<Operation>{};
  }
  std::vector<Operation> ExitedEarly(SearchContext&, int64_t, ExitReason) override { return {}; }
  std::vector<Operation> Closed(SearchContext& context, int64_t) override { return Next(context); }
  nlohmann::json Save() const override;
  Status Load(const nlohmann::json& state) override;

 private:
  std::vector<Operation> Next(SearchContext& context);
  SearcherConfig config_;
  std::vector<nlohmann::json> remaining_;
};

}  // namespace det::master::searcher
