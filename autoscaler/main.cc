// det-autoscaler: follows the master's event bus (snapshot, then every event).
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <iostream>

#include "autoscaler/autoscaler_config.h"
#include "autoscaler/cluster_view.h"
#include "common/process.h"
#include "common/version.h"

int main(int argc, char** argv) {
  CLI::App app{"det-autoscaler: launches and terminates agent instances as work comes and goes"};
  std::string config_path, log_level, log_format, master_host;
  int subscribe_port = -1, snapshot_port = -1;
  bool plaintext = false;
  app.set_version_flag("--version", std::string("det-autoscaler ") + det::kVersion);
  app.add_option("-c,--config", config_path, "autoscaler.yaml to load");
  app.add_option("--master-host", master_host, "master host (overrides master_host)");
  app.add_option("--event-subscribe-port", subscribe_port, "master's event_subscribe_port");
  app.add_option("--snapshot-port", snapshot_port, "master's snapshot_port");
  app.add_option("--log-level", log_level, "trace|debug|info|warn|error");
  app.add_option("--log-format", log_format, "text|json");
  app.add_flag("--plaintext", plaintext, "allow TCP without CURVE (bus.security.plaintext)");
  CLI11_PARSE(app, argc, argv);

  auto config = det::LoadConfig(config_path, &det::autoscaler::ParseAutoscalerConfig);
  if (!config.ok()) {
    std::cerr << "error: " << config.status().message() << "\n";
    return 2;
  }
  if (!master_host.empty()) config->master_host = master_host;
  if (subscribe_port >= 0) config->event_subscribe_port = subscribe_port;
  if (snapshot_port >= 0) config->snapshot_port = snapshot_port;
  if (plaintext) config->security.plaintext = true;
  if (int rc = det::SetUpLogging(config->log, log_level, log_format); rc != 0) return rc;
  auto security = det::bus::ResolveClientSecurity(config->security);
  if (!security.ok()) {
    spdlog::critical("{}", security.status().message());
    return 2;
  }

  std::atomic<bool>& stop = det::InstallStopSignals();
  zmq::context_t context;
  det::bus::EventSubscriber subscriber(
      context, "autoscaler",
      {"", det::bus::TcpEndpoint(config->master_host, config->event_subscribe_port),
       det::bus::TcpEndpoint(config->master_host, config->snapshot_port)},
      *security, det::RealClock::Instance(), {"agent.", "cluster."});
  if (auto started = subscriber.Start(); !started.ok()) {
    spdlog::critical("{}", started.message());
    return 2;
  }
  spdlog::info("det-autoscaler {} following {}", det::kVersion, config->master_host);
  det::autoscaler::ClusterView view;
  std::vector<det::bus::EventSubscriber::Update> updates;
  while (!stop.load()) {
    std::vector<zmq::pollitem_t> items;
    for (zmq::socket_t* s : subscriber.sockets()) items.push_back({s->handle(), 0, ZMQ_POLLIN, 0});
    det::bus::Poll(items.data(), items.size(), std::chrono::milliseconds(200));
    updates.clear();
    subscriber.Receive(&updates);
    subscriber.Tick(&updates);
    for (const auto& update : updates) view.Apply(update);
  }
  return 0;
}
