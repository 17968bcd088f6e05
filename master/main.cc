// det-master: the cluster's master. Flags override master.yaml; see README.md for the fields.
#include <malloc.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <thread>

#include "common/logging.h"
#include "common/process.h"
#include "common/version.h"
#include "master/master.h"

int main(int argc, char** argv) {
  // Two malloc arenas instead of glibc's 8 per core: the master's many threads each build and
  // drop megabyte replies (log and metric pages), and with an arena each the freed pages stayed
  // resident: a 1M-point metric read-back peaked at 174 MiB, 109 MiB with two (bench/
  // log_volume_bench). Its threads wait on sockets and PostgreSQL, not on malloc.
  mallopt(M_ARENA_MAX, 2);
  CLI::App app{"det-master: schedules experiments onto agents and keeps the cluster's state"};
  std::string config_path, log_level, log_format, endpoints_file;
  bool plaintext = false;
  app.set_version_flag("--version", std::string("det-master ") + det::kVersion);
  app.add_option("-c,--config", config_path, "master.yaml to load (default: built-in defaults)");
  app.add_option("--log-level", log_level, "trace|debug|info|warn|error (overrides log.level)");
  app.add_option("--log-format", log_format, "text|json (overrides log.format)");
  app.add_option("--endpoints-file", endpoints_file, "write the bound endpoints here (YAML)");
  app.add_flag("--plaintext", plaintext, "allow TCP without CURVE (bus.security.plaintext)");
  auto* migrate = app.add_subcommand("migrate", "apply database migrations, then exit");
  auto* check = app.add_subcommand(
      "check-config", "check master.yaml (-c FILE), print its warnings, exit 0 if valid, 2 if not");
  migrate->fallthrough();
  check->fallthrough();
  CLI11_PARSE(app, argc, argv);

  auto config = det::LoadConfig(config_path, &det::master::ParseMasterConfig);
  if (!config.ok()) {
    std::cerr << "error: " << config.status().message() << "\n";
    return 2;
  }
  if (*check) {
    for (const std::string& warning : config->warnings) std::cerr << "warning: " << warning << "\n";
    std::cout << (config_path.empty() ? "the built-in defaults" : config_path) << ": valid\n";
    return 0;
  }
  if (!endpoints_file.empty()) config->endpoints_file = endpoints_file;
  if (plaintext) config->bus.security.plaintext = true;
  if (int rc = det::SetUpLogging(config->log, log_level, log_format); rc != 0) return rc;
  for (const std::string& warning : config->warnings) spdlog::warn("master.yaml: {}", warning);

  if (*migrate) {
    auto database = det::master::MasterDatabase::Open(config->database);
    if (!database.ok()) {
      spdlog::critical("migration failed: {}", database.status().message());
      return 1;
    }
    spdlog::info("schema at version {}", (*database)->schema_version());
    return 0;
  }
  std::atomic<bool>& stop = det::InstallStopSignals();
  det::RaiseOpenFileLimit();
  det::master::Master master(*config, det::RealClock::Instance());
  master.SetLogBuffer(det::master::LogBuffer::AttachToDefaultLogger());
  auto started = master.Start();
  if (!started.ok()) {
    spdlog::critical("cannot start: {}", started.status().message());
    return 1;
  }
  while (!stop.load()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  spdlog::info("det-master stopping");
  master.Stop();
  return 0;
}
