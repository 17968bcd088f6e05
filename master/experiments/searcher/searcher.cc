#include "master/experiments/searcher/searcher.h"

#include "master/experiments/searcher/adaptive_asha.h"
#include "master/experiments/searcher/asha_search.h"
#include "master/experiments/searcher/basic_searches.h"

namespace det::master::searcher {

Create SearchContext::NewTrial() { return NewTrial(Sample(hparams, rng)); }

Create SearchContext::NewTrial(nlohmann::json sampled) {
  Create create;
  create.request_id = ++last_request_id;
  create.hparams = std::move(sampled);
  create.trial_seed = static_cast<uint32_t>(rng.Below(uint64_t{1} << 31));
  return create;
}

Searcher::Searcher(const SearcherConfig& config, Hyperparameters hparams, uint32_t seed,
                   std::unique_ptr<SearchMethod> method)
    : config_(config), hparams_(std::move(hparams)), rng_(seed), method_(std::move(method)) {}

Result<std::unique_ptr<Searcher>> Searcher::Make(const SearcherConfig& config,
                                                 Hyperparameters hparams, uint32_t seed) {
  std::unique_ptr<SearchMethod> method;
  if (config.name == "grid") {
    DET_ASSIGN_OR_RETURN(std::vector<nlohmann::json> points, GridPoints(hparams));
    method = std::make_unique<GridSearch>(config, std::move(points));
  } else if (config.name == "async_halving") {
    method = std::make_unique<AshaSearch>(config);
  } else if (config.name == "adaptive_asha") {
    method = std::make_unique<AdaptiveAshaSearch>(config);
  } else if (config.name == "single" || config.name == "random") {
    SearcherConfig random = config;
    if (config.name == "single") random.max_trials = random.max_concurrent_trials = 1;
    method = std::make_unique<RandomSearch>(random);
  } else {
    return InvalidArgument("searcher.name: \"" + config.name + "\" is not a searcher");
  }
  return std::unique_ptr<Searcher>(
      new Searcher(config, std::move(hparams), seed, std::move(method)));
}

Result<std::unique_ptr<Searcher>> Searcher::Restore(const SearcherConfig& config,
                                                    Hyperparameters hparams,
                                                    const nlohmann::json& saved) {
  DET_ASSIGN_OR_RETURN(std::unique_ptr<Searcher> searcher, Make(config, std::move(hparams), 0));
  try {
    DET_RETURN_IF_ERROR(searcher->rng_.Load(saved.at("rng").get<std::string>()));
    searcher->last_request_id_ = saved.at("last_request_id").get<int64_t>();
    searcher->requested_ = saved.at("requested").get<int>();
    searcher->closed_ = saved.at("closed").get<int>();
    searcher->failures_ = saved.at("failures").get<int>();
    searcher->cancels_ = saved.at("cancels").get<int>();
    searcher->shut_down_ = saved.at("shut_down").get<bool>();
    DET_RETURN_IF_ERROR(searcher->method_->Load(saved.at("method")));
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument(std::string("saved searcher state: ") + e.what());
  }
  return searcher;
}

nlohmann::json Searcher::Save() const {
  return {{"rng", rng_.Save()},      {"last_request_id", last_request_id_},
          {"requested", requested_}, {"closed", closed_},
          {"failures", failures_},   {"cancels", cancels_},
          {"shut_down", shut_down_}, {"method", method_->Save()}};
}

Status Searcher::ReopenSingleTrial() {
  if (config_.name != "single" || requested_ != 1) {
    return FailedPrecondition("only a single search of one trial can be reopened (" + config_.name +
                              ": " + std::to_string(requested_) + " trials asked)");
  }
  closed_ = failures_ = cancels_ = 0;
  shut_down_ = false;
  return Status::Ok();
}

std::vector<Operation> Searcher::Track(std::vector<Operation> operations) {
  for (const Operation& op : operations) {
    if (std::holds_alternative<Create>(op)) ++requested_;
  }
  if (!shut_down_ && requested_ > 0 && closed_ >= requested_) {
    shut_down_ = true;
    operations.push_back(Shutdown{failures_ == requested_, cancels_ == requested_});
  }
  return operations;
}

std::vector<Operation> Searcher::Start() {
  SearchContext context = Context();
  return Track(method_->Initial(context));
}

std::vector<Operation> Searcher::TrialCreated(int64_t request_id) {
  method_->Created(request_id);
  return {};
}

Result<std::vector<Operation>> Searcher::ValidationCompleted(int64_t request_id,
                                                             const nlohmann::json& metrics) {
  SearchContext context = Context();
  DET_ASSIGN_OR_RETURN(std::vector<Operation> operations,
                       method_->Validated(context, request_id, metrics));
  return Track(std::move(operations));
}

std::vector<Operation> Searcher::TrialExitedEarly(int64_t request_id, ExitReason reason) {
  if (reason == ExitReason::kErrored) ++failures_;
  if (reason == ExitReason::kUserCanceled) ++cancels_;
  SearchContext context = Context();
  return Track(method_->ExitedEarly(context, request_id, reason));
}

std::vector<Operation> Searcher::TrialClosed(int64_t request_id) {
  ++closed_;
  SearchContext context = Context();
  return Track(method_->Closed(context, request_id));
}

}  // namespace det::master::searcher
