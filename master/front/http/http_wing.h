#pragma once

// The master's HTTP wing: one router with every group's routes (users, experiments, cluster and
// autoscaler, the trial-facing Core API), the event-driven server that serves them with the
// WebUI's files, and a housekeeping thread that answers parked long polls and ends timed-out
// rendezvous.

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "master/auth/allocation_token.h"
#include "master/cluster/resource_config.h"
#include "master/front/answer_cache.h"
#include "master/front/front_door.h"
#include "master/front/http/core_routes.h"
#include "master/front/http/router.h"
#include "master/front/http/server.h"
#include "storage/db_config.h"

namespace det::master::http {

class HttpWing {
 public:
  struct Options {
    // What the user routes call (required); its parts are not owned and outlive the wing.
    FrontDoor* front = nullptr;
    DistributedTrainingConfig distributed;
    ServerOptions server;
    // The master's event bus (in process): polled lists are answered from encoded answers it
    // keeps fresh (answer_cache.h). Empty: every answer asks the actors.
    bus::EventBrokerEndpoints events;
    Duration answer_max_age = std::chrono::seconds(1);  // how stale a polled list may be
  };
  HttpWing(zmq::context_t& context, storage::DbConfig db, AllocationTokens tokens, Options options);
  ~HttpWing();  // Stop()s

  // See HttpServer::Bind.
  Result<int> Bind(const std::string& host, int port);
  void Start();
  void Stop();  // idempotent
  // "get /api/v1/agents", ...: every route the wing answers.
  const std::vector<std::string>& operations() const { return router_.operations(); }
  HttpServer::Stats stats() const { return server_.stats(); }

 private:
  Router router_;
  // Declared before the routes so that it outlives them: parked requests (the board's long
  // polls, the rendezvous) hold their connections, which give their place back to the server's
  // state when the routes drop them.
  HttpServer server_;
  TrialRoutes trial_;
  std::unique_ptr<AnswerCache> answers_;  // null without an event bus
  std::atomic<bool> stop_{false};
  std::thread housekeeping_;
};

// Every route of the wing, on `router` (the wing's constructor does this); `cache` may be null.
void RouteEverything(Router& router, FrontDoor& front, TrialRoutes& trial, AnswerCache* cache);

}  // namespace det::master::http
