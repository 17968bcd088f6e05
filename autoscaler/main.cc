// det-autoscaler: sizes every pool with a provider, following the master's event bus.
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <iostream>

#include "autoscaler/autoscaler.h"
#include "autoscaler/autoscaler_config.h"
#include "autoscaler/simulator.h"
#include "common/logging.h"
#include "common/process.h"
#include "common/version.h"

int main(int argc, char** argv) {
  CLI::App app{"det-autoscaler: launches and terminates agent instances as work comes and goes"};
  std::string config_path, log_level, log_format, master_host;
  int subscribe_port = -1, publish_port = -1, snapshot_port = -1;
  bool plaintext = false;
  app.set_version_flag("--version", std::string("det-autoscaler ") + det::kVersion);
  app.add_option("-c,--config", config_path, "autoscaler.yaml to load");
  app.add_option("--master-host", master_host, "master host (overrides master_host)");
  app.add_option("--event-subscribe-port", subscribe_port, "master's event_subscribe_port");
  app.add_option("--event-publish-port", publish_port, "master's event_publish_port");
  app.add_option("--snapshot-port", snapshot_port, "master's snapshot_port");
  app.add_option("--log-level", log_level, "trace|debug|info|warn|error");
  app.add_option("--log-format", log_format, "text|json");
  app.add_flag("--plaintext", plaintext, "allow TCP without CURVE (bus.security.plaintext)");
  det::autoscaler::SimulateCommand sim;
  std::string boot_time = "60s", boot_jitter = "30s";
  auto* simulate = app.add_subcommand(
      "simulate", "replay a workload trace against the scale decider and a simulated cloud");
  simulate->add_option("--trace", sim.trace, "CSV: arrival_s,duration_s,slots[,pool]")->required();
  simulate->add_option("--config", sim.config, "master.yaml with resource_pools[].provider")
      ->required();
  simulate->add_option("--compare", sim.compare, "a second master.yaml, side by side");
  simulate->add_option("--boot-time", boot_time, "instance boot time (60s)");
  simulate->add_option("--boot-jitter", boot_jitter, "boot time varies by up to this (30s)");
  simulate->add_option("--capacity-error-rate", sim.cloud.capacity_error_rate,
                       "share of spot launch calls failing for capacity (0)");
  simulate->add_option("--spot-interruptions-per-hour", sim.cloud.spot_interruptions_per_hour,
                       "per spot instance (0)");
  simulate->add_option("--price-per-hour", sim.cloud.price_per_hour, "on-demand ($3.06)");
  simulate->add_option("--spot-price-per-hour", sim.cloud.spot_price_per_hour, "spot ($0.92)");
  simulate->add_option("--seed", sim.cloud.seed, "random seed (1)");
  CLI11_PARSE(app, argc, argv);
  if (*simulate) {
    spdlog::set_level(spdlog::level::off);  // the simulated cloud's errors are counted instead
    auto boot = det::ParseDuration(boot_time);
    auto jitter = det::ParseDuration(boot_jitter);
    if (!boot.ok() || !jitter.ok()) {
      std::cerr << "error: --boot-time and --boot-jitter take durations (e.g. 90s, 2m)\n";
      return 2;
    }
    sim.cloud.boot_time = *boot;
    sim.cloud.boot_jitter = *jitter;
    sim.sections = det::autoscaler::BuiltInProviders(det::RealClock::Instance()).sections;
    return det::autoscaler::RunSimulateCommand(sim);
  }

  auto config = det::LoadConfig(config_path, &det::autoscaler::ParseAutoscalerConfig);
  if (!config.ok()) {
    std::cerr << "error: " << config.status().message() << "\n";
    return 2;
  }
  if (!master_host.empty()) config->master_host = master_host;
  if (subscribe_port >= 0) config->event_subscribe_port = subscribe_port;
  if (publish_port >= 0) config->event_publish_port = publish_port;
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
  const det::Clock& clock = det::RealClock::Instance();
  det::autoscaler::Autoscaler autoscaler(context, *config, *security, clock,
                                         det::autoscaler::BuiltInProviders(clock));
  if (auto started = autoscaler.Start(); !started.ok()) {
    spdlog::critical("{}", started.message());
    return 2;
  }
  spdlog::info("det-autoscaler {} following {}", det::kVersion, config->master_host);
  autoscaler.Run(stop);
  return 0;
}
