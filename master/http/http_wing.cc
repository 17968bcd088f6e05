#include "master/http/http_wing.h"

#include "master/http/autoscaler_routes.h"
#include "master/http/cluster_routes.h"
#include "master/http/experiment_routes.h"
#include "master/http/master_routes.h"
#include "master/http/user_routes.h"

namespace det::master::http {
namespace {

// How often parked long polls are checked for their stop signal and rendezvous for their time.
constexpr auto kHousekeeping = std::chrono::milliseconds(50);

}  // namespace

void RouteEverything(Router& router, Api& api, TrialRoutes& trial) {
  RouteExperimentApi(router, api);
  RouteUserApi(router, api.users());
  RouteMasterApi(router, api);
  RouteClusterApi(router, api);
  RouteAutoscalerApi(router, api);
  trial.Route(router);
}

HttpWing::HttpWing(zmq::context_t& context, storage::DbConfig db, AllocationTokens tokens,
                   Options options)
    : trial_(context, std::move(db), std::move(tokens), options.distributed),
      server_(router_, std::move(options.server)) {
  RouteEverything(router_, *options.api, trial_);
}

HttpWing::~HttpWing() { Stop(); }

Result<int> HttpWing::Bind(const std::string& host, int port) { return server_.Bind(host, port); }

void HttpWing::Start() {
  server_.Start();
  housekeeping_ = std::thread([this] {
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
}

}  // namespace det::master::http
