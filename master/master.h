#pragma once

#include <memory>
#include <string>
#include <zmq.hpp>

#include "bus/event_broker.h"
#include "bus/security.h"
#include "bus/zap_handler.h"
#include "master/auth/stored_user_records.h"
#include "master/auth/users.h"
#include "master/cluster/agent_registry.h"
#include "master/cluster/stored_cluster_records.h"
#include "master/experiments/experiment_service.h"
#include "master/experiments/stored_experiment_records.h"
#include "master/front/cli_gateway.h"
#include "master/front/front_door.h"
#include "master/front/http/http_wing.h"
#include "master/master_config.h"
#include "master/master_database.h"
#include "master/records/instance_recorder.h"
#include "master/records/log_retention.h"
#include "master/records/store.h"

namespace det::master {

// The endpoints the master actually bound (ports resolved when configured as 0).
struct MasterEndpoints {
  std::string gateway;
  std::string rest;  // http://host:port
  std::string agent;
  bus::EventBrokerEndpoints events;
};

// det-master: wires the event broker, the agent registry, the experiment service, the CLI gateway
// and the Core API, each an actor on its own thread(s), over one ZeroMQ context. Start() binds
// everything (and writes the endpoints file); Stop() (or destruction) stops the actors in reverse
// order.
class Master {
 public:
  Master(MasterConfig config, const Clock& clock);
  ~Master();

  // Before Start(): where `det master logs` reads this process's log lines.
  void SetLogBuffer(std::shared_ptr<LogBuffer> logs) { logs_ = std::move(logs); }
  Result<MasterEndpoints> Start();
  void Stop();

 private:
  // The TLS certificate's PEM text, for trial runs to trust; "" without TLS.
  std::string MasterCertificate() const;
  // Users and their logins; creates the admin user at the first start.
  Status StartUsers();
  Status WriteEndpointsFile(const MasterEndpoints& endpoints) const;

  MasterConfig config_;
  const Clock& clock_;
  zmq::context_t context_;
  std::shared_ptr<LogBuffer> logs_;
  std::unique_ptr<MasterDatabase> database_;
  std::unique_ptr<auth::StoredUserRecords> user_records_;  // what users_ stores
  std::unique_ptr<auth::Users> users_;
  std::unique_ptr<bus::ZapHandler> zap_;
  std::unique_ptr<bus::EventBroker> broker_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<LogRetention> log_retention_;
  std::unique_ptr<InstanceRecorder> recorder_;
  std::unique_ptr<StoredClusterRecords> cluster_records_;  // the registry's, on the store
  std::unique_ptr<AgentRegistry> registry_;
  std::unique_ptr<FrontDoor> front_;  // what both gateways call
  std::unique_ptr<CliGateway> gateway_;
  std::unique_ptr<StoredExperimentRecords> experiment_records_;  // the experiment service's
  std::unique_ptr<ExperimentService> experiments_;
  std::unique_ptr<http::HttpWing> http_;
};

}  // namespace det::master
