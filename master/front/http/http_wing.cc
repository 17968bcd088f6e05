#include "master/front/http/http_wing.h"

#include "common/thread_name.h"
#include "master/front/http/autoscaler_routes.h"
#include "master/front/http/cluster_routes.h"
#include "master/front/http/command_routes.h"
#include "master/front/http/experiment_routes.h"
#include "master/front/http/master_routes.h"
#include "master/front/http/metric_series_routes.h"
#include "master/front/http/model_routes.h"
#include "master/front/http/token_routes.h"
#include "master/front/http/trial_metrics_stream.h"
#include "master/front/http/user_routes.h"
#include "master/front/http/workspace_routes.h"

namespace det::master::http {
namespace {

// How often parked long polls are checked for their stop signal and rendezvous for their time.
constexpr auto kHousekeeping = std::chrono::milliseconds(50);

}  // namespace

void RouteEverything(Router& router, FrontDoor& front, TrialRoutes& trial, AnswerCache* cache) {
  RouteExperimentApi(router, front, cache);
  RouteMetricSeries(router, front);
  RouteUserApi(router, front.calls.users());
  RouteTokenApi(router, front.calls.users());
  RouteMasterApi(router, front);
  RouteClusterApi(router, front, cache);
  RouteCommandApi(router, front);
  RouteTrialMetricsStreams(router, front);
  RouteAutoscalerApi(router, front);
  RouteWorkspaceApi(router, front);
  RouteModelApi(router, front, [&trial](const auth::Principal& user, const std::string& uuid) {
    return trial.CheckpointToRegister(user, uuid);
  });
  trial.Route(router);
}

HttpWing::HttpWing(zmq::context_t& context, storage::DbConfig db, AllocationTokens tokens,
                   Options options)
    : server_(router_, std::move(options.server)),
      trial_(context, std::move(db), std::move(tokens), options.distributed, *options.front) {
  if (!options.events.subscribe.empty()) {
    answers_ = std::make_unique<AnswerCache>(context, options.events, options.answer_max_age,
                                             options.front->clock);
    CacheClusterAnswers(*answers_, *options.front);
    CacheExperimentAnswers(*answers_, *options.front);
  }
  RouteEverything(router_, *options.front, trial_, answers_.get());
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
