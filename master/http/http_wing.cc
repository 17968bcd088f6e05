#include "master/http/http_wing.h"

#include "common/thread_name.h"
#include "master/http/autoscaler_routes.h"
#include "master/http/cluster_routes.h"
#include "master/http/experiment_routes.h"
#include "master/http/master_routes.h"
#include "master/http/metric_series_routes.h"
#include "master/http/user_routes.h"

namespace det::master::http {
namespace {

// How often parked long polls are checked for their stop signal and rendezvous for their time.
constexpr auto kHousekeeping = std::chrono::milliseconds(50);

}  // namespace

void RouteEverything(Router& router, Api& api, TrialRoutes& trial, AnswerCache* cache) {
  RouteExperimentApi(router, api, cache);
  RouteMetricSeries(router, api);
  RouteUserApi(router, api.users());
  RouteMasterApi(router, api);
  RouteClusterApi(router, api, cache);
  RouteAutoscalerApi(router, api);
  trial.Route(router);
}

HttpWing::HttpWing(zmq::context_t& context, storage::DbConfig db, AllocationTokens tokens,
                   Options options)
    : server_(router_, std::move(options.server)),
      trial_(context, std::move(db), std::move(tokens), options.distributed, *options.api) {
  if (!options.events.subscribe.empty()) {
    answers_ = std::make_unique<AnswerCache>(context, options.events, options.answer_max_age);
    CacheClusterAnswers(*answers_, *options.api);
    CacheExperimentAnswers(*answers_, *options.api);
  }
  RouteEverything(router_, *options.api, trial_, answers_.get());
}

HttpWing::~HttpWing() { Stop(); }

Result<int> HttpWing::Bind(const std::string& host, int port) { return server_.Bind(host, port); }

void HttpWing::Start() {
  if (answers_) answers_->Start();
  server_.Start();
  housekeeping_ = std::thread([this] {
    NameThisThread("http-keeper");
    while (!stop_) {
      trial_.Tick();
      std::this_thread::sleep_for(kHousekeeping);
    }
  });
}

void HttpWing::Stop() {
  stop_ = true;
  if (housekeeping_.joinable()) housekeeping_.join();
  server_.Stop();
  if (answers_) answers_->Stop();
}

}  // namespace det::master::http
