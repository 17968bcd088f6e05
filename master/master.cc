#include "master/master.h"

#include <spdlog/spdlog.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "bus/rpc_client.h"
#include "common/process.h"
#include "common/version.h"
#include "master/cluster/task_recovery.h"
#include "storage/agents_repo.h"

namespace det::master {
namespace {

// The event bus inside the master's process.
const bus::EventBrokerEndpoints kInprocEvents{"inproc://master/events-publish",
                                              "inproc://master/events-subscribe",
                                              "inproc://master/events-snapshot"};

// A wildcard host as workloads reach it: this host's name.
std::string Reachable(const std::string& host) {
  return host == "*" || host == "0.0.0.0" ? HostName() : host;
}

// "tcp://10.0.0.5:8090" -> "10.0.0.5:8090".
std::string WorkloadMasterAddress(const std::string& gateway_endpoint) {
  const std::string address = gateway_endpoint.substr(gateway_endpoint.find("://") + 3);
  const std::string host = address.substr(0, address.rfind(':'));
  return Reachable(host) + address.substr(host.size());
}

// What the autoscaler needs of each pool with a `provider:` section.
std::vector<bus::PoolProviderEvent> PoolProviders(const ResourcesConfig& resources,
                                                  const std::string& cluster_id,
                                                  const std::string& agent_endpoint) {
  const std::string address = WorkloadMasterAddress(agent_endpoint);
  const size_t colon = address.rfind(':');
  std::vector<bus::PoolProviderEvent> events;
  for (const ResourcePoolConfig& pool : resources.resource_pools) {
    if (!pool.provider) continue;
    YAML::Emitter yaml;
    yaml << pool.provider->raw;
    events.push_back({pool.pool_name, yaml.c_str(), cluster_id, address.substr(0, colon),
                      std::stoi(address.substr(colon + 1))});
  }
  return events;
}

}  // namespace

Master::Master(MasterConfig config, const Clock& clock)
    : config_(std::move(config)), clock_(clock) {}

Master::~Master() { Stop(); }

Result<MasterEndpoints> Master::Start() {
  const MasterBusConfig& bus_config = config_.bus;
  DET_ASSIGN_OR_RETURN(database_, MasterDatabase::Open(config_.database));
  DET_RETURN_IF_ERROR(StartUsers());
  DET_ASSIGN_OR_RETURN(bus::SocketSecurity security,
                       bus::ResolveServerSecurity(bus_config.security));
  if (security.mode == bus::SocketSecurity::Mode::kCurveServer) {
    zap_ =
        std::make_unique<bus::ZapHandler>(context_, security.allowed_clients, security.open_roles);
  } else {
    spdlog::warn(
        "bus: plaintext TCP (bus.security.plaintext: true); anyone who can reach the "
        "master's ports can join the cluster");
  }
  const bus::SocketLimits limits{.max_message_bytes = bus_config.max_message_bytes};
  auto tcp = [&](int port) { return bus::TcpEndpoint(bus_config.host, port); };

  MasterEndpoints endpoints;
  broker_ = std::make_unique<bus::EventBroker>(context_, clock_, limits);
  DET_ASSIGN_OR_RETURN(endpoints.events, broker_->Bind({tcp(bus_config.event_publish_port),
                                                        tcp(bus_config.event_subscribe_port),
                                                        tcp(bus_config.snapshot_port)},
                                                       security.WithRole(bus::kRoleAutoscaler)));
  // In-process publishers reach the broker over inproc: a second XSUB endpoint on the same socket.
  DET_RETURN_IF_ERROR(broker_->BindLocal(kInprocEvents).status());
  broker_->Start();

  // The gateway first. Until the registry runs, the gateway's forwarded calls time out.
  bus::MasterInfo info{kVersion, database_->cluster_id(), bus::RandomId(),
                       UnixNanos(clock_.WallNow()), config_.cluster_name};
  front_ = std::make_unique<FrontDoor>(context_, clock_, database_->db(), *users_, info,
                                       config_.resources, bus_config.max_message_bytes);
  gateway_ = std::make_unique<CliGateway>(context_, clock_, *front_, bus_config.max_message_bytes,
                                          kInprocEvents);
  front_->master.SetLogBuffer(logs_);
  front_->calls.SetDefaultTask(config_.security.default_task);
  front_->master.SetBusCounters([this] {
    return BusCounters{
        static_cast<int64_t>(gateway_->handled()), static_cast<int64_t>(gateway_->dropped()),
        static_cast<int64_t>(broker_->forwarded()), static_cast<int64_t>(broker_->dropped())};
  });
  DET_ASSIGN_OR_RETURN(endpoints.gateway, gateway_->Bind(tcp(bus_config.gateway_port),
                                                         security.WithRole(bus::kRoleCli)));
  front_->calls.SetGatewayPort(
      std::stoi(endpoints.gateway.substr(endpoints.gateway.rfind(':') + 1)));
  if (security.mode == bus::SocketSecurity::Mode::kCurveServer) {
    front_->calls.SetGatewayPublicKey(security.own.public_key);
  }
  gateway_->Start();

  // The REST port before the registry: its URL is DET_MASTER for workloads (the Core API's base;
  // det inside a task finds the gateway from it). The wing serves once everything below runs.
  const AllocationTokens tokens(database_->token_secret());
  const DistributedTrainingConfig& distributed = config_.resources.distributed;
  http_ = std::make_unique<http::HttpWing>(
      context_, database_->db().config(), tokens,
      http::HttpWing::Options{.front = front_.get(),
                              .distributed = distributed,
                              .server = {.limits = config_.http,
                                         .tls_cert = config_.security.tls_cert,
                                         .tls_key = config_.security.tls_key,
                                         .webui_dir = config_.webui_dir},
                              .events = kInprocEvents});
  DET_ASSIGN_OR_RETURN(int rest_port, http_->Bind(bus_config.host, config_.port));
  endpoints.rest = (config_.security.tls() ? "https://" : "http://") + Reachable(bus_config.host) +
                   ":" + std::to_string(rest_port);

  store_ = std::make_unique<Store>(database_->db().config());
  log_retention_ = std::make_unique<LogRetention>(database_->db(), config_.retention, clock_);
  front_->master.SetLogRetention(log_retention_.get());
  for (const ResourcePoolConfig& pool : config_.resources.resource_pools) {
    store_->Enqueue([pool](pqxx::work& tx) {
      storage::UpsertResourcePool(tx, {pool.pool_name, pool.description, "{}"});
    });
  }
  recorder_ = std::make_unique<InstanceRecorder>(context_, clock_, *store_, kInprocEvents);
  recorder_->Start();
  cluster_records_ = std::make_unique<StoredClusterRecords>(*store_);
  registry_ = std::make_unique<AgentRegistry>(context_, clock_, bus_config.channel,
                                              bus_config.max_message_bytes, *cluster_records_,
                                              endpoints.rest, config_.resources, tokens);
  DET_ASSIGN_OR_RETURN(endpoints.agent,
                       registry_->Bind(tcp(bus_config.agent_port),
                                       security.WithRole(bus::kRoleAgent), kInprocEvents.publish));
  DET_ASSIGN_OR_RETURN(std::vector<Task> unfinished, LoadOpenTasks(database_->db()));
  registry_->Restore(std::move(unfinished));
  registry_->PublishProviders(
      PoolProviders(config_.resources, database_->cluster_id(), endpoints.agent));
  registry_->Start();

  experiment_records_ = std::make_unique<StoredExperimentRecords>(database_->db().config());
  experiments_ = std::make_unique<ExperimentService>(
      context_, clock_, *experiment_records_,
      TrialLaunchOptions{endpoints.rest, distributed.gloo_port_range.ToString(),
                         distributed.nccl_port_range.ToString(), MasterCertificate(),
                         config_.checkpoint_storage, config_.checkpoint_storage_given,
                         database_->cluster_id(), config_.resources.preemption_timeout,
                         config_.security.default_task},
      kInprocEvents);
  DET_RETURN_IF_ERROR(experiments_->Bind());
  DET_RETURN_IF_ERROR(experiments_->Restore());
  experiments_->Start();
  http_->Start();

  spdlog::info(
      "det-master {} listening: gateway {}, agents {}, REST {}, events {} (publish {}, snapshot "
      "{})",
      kVersion, endpoints.gateway, endpoints.agent, endpoints.rest, endpoints.events.subscribe,
      endpoints.events.publish, endpoints.events.snapshot);
  DET_RETURN_IF_ERROR(WriteEndpointsFile(endpoints));
  return endpoints;
}

void Master::Stop() {
  if (gateway_) gateway_->Stop();
  if (http_) http_->Stop();
  if (experiments_) experiments_->Stop();
  if (registry_) registry_->Stop();
  if (recorder_) recorder_->Stop();
  if (broker_) broker_->Stop();
  gateway_.reset();
  http_.reset();
  front_.reset();
  experiments_.reset();
  registry_.reset();
  cluster_records_.reset();
  recorder_.reset();
  store_.reset();  // after the registry: writes what it queued
  log_retention_.reset();
  broker_.reset();
  zap_.reset();
  users_.reset();
  database_.reset();
}

std::string Master::MasterCertificate() const {
  if (!config_.security.tls()) return "";
  std::ifstream in(config_.security.tls_cert);
  std::stringstream pem;
  pem << in.rdbuf();
  return pem.str();
}

Status Master::StartUsers() {
  auth::UsersConfig users;
  users.allow_root_tasks = config_.security.allow_root_tasks;
  users.session_lifespan = config_.security.session_lifespan;
  user_records_ = std::make_unique<auth::StoredUserRecords>(database_->db());
  users_ = std::make_unique<auth::Users>(*user_records_, clock_, users);
  DET_ASSIGN_OR_RETURN(std::optional<std::string> generated,
                       users_->Bootstrap(config_.security.initial_user_password));
  if (generated) {
    // Shown once, on the terminal only: not through the logger, whose lines `det master logs`
    // and log collectors keep. Only its hash is kept.
    std::fprintf(stderr,
                 "created the user \"admin\" with the generated password %s (shown only now, "
                 "and not logged; change it with `det user change-password`, or set "
                 "security.initial_user_password before the first start)\n",
                 generated->c_str());
    std::fflush(stderr);
    spdlog::warn(
        "created the user \"admin\" with a generated password, printed once on standard error");
  }
  return Status::Ok();
}

Status Master::WriteEndpointsFile(const MasterEndpoints& e) const {
  if (config_.endpoints_file.empty()) return Status::Ok();
  const std::string tmp = config_.endpoints_file + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return InvalidArgument("endpoints_file: cannot write " + tmp);
    out << "gateway: " << e.gateway << "\nrest: " << e.rest << "\nagent: " << e.agent
        << "\nevent_subscribe: " << e.events.subscribe << "\nevent_publish: " << e.events.publish
        << "\nsnapshot: " << e.events.snapshot << "\n";
  }
  if (std::rename(tmp.c_str(), config_.endpoints_file.c_str()) != 0) {
    return Internal("endpoints_file: cannot rename " + tmp);
  }
  return Status::Ok();
}

}  // namespace det::master
