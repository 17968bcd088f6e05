// det-agent: runs on each compute host, offers its slots to the master.
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <iostream>

#include "agent/agent.h"
#include "agent/workload_spawn.h"
#include "common/logging.h"
#include "common/process.h"
#include "common/version.h"

int main(int argc, char** argv) {
  CLI::App app{"det-agent: offers this host's slots to the det-master and runs its workloads"};
  std::string config_path, log_level, log_format, master_host, agent_id, pool, slot_type, work_dir;
  std::string container_runtime, docker_socket, container_master_host;
  int master_port = -1, artificial_slots = -1, container_master_port = -1;
  bool plaintext = false;
  app.set_version_flag("--version", std::string("det-agent ") + det::kVersion);
  app.add_option("-c,--config", config_path, "agent.yaml to load");
  app.add_option("--master-host", master_host, "master host (overrides master_host)");
  app.add_option("--master-port", master_port, "master agent port (overrides master_port)");
  app.add_option("--agent-id", agent_id, "agent id (default: hostname)");
  app.add_option("--resource-pool", pool, "resource pool to join");
  app.add_option("--artificial-slots", artificial_slots, "report N fake CPU slots (testing)");
  app.add_option("--slot-type", slot_type, "auto|cuda|cpu|none (overrides slot_type)")
      ->check(CLI::IsMember({"auto", "cuda", "cpu", "none"}));
  app.add_option("--work-dir", work_dir, "workloads' folders (overrides work_dir)");
  app.add_option("--container-runtime", container_runtime,
                 "process|docker (overrides container_runtime)")
      ->check(CLI::IsMember({"process", "docker"}));
  app.add_option("--docker-socket", docker_socket, "the Docker engine's socket (docker.socket)");
  app.add_option("--container-master-host", container_master_host,
                 "the master's host as containers reach it (container_master_host)");
  app.add_option("--container-master-port", container_master_port,
                 "the master's port as containers reach it (container_master_port)")
      ->check(CLI::Range(1, 65535));
  app.add_option("--log-level", log_level, "trace|debug|info|warn|error");
  app.add_option("--log-format", log_format, "text|json");
  app.add_flag("--plaintext", plaintext, "allow TCP without CURVE (bus.security.plaintext)");
  CLI11_PARSE(app, argc, argv);

  auto config = det::LoadConfig(config_path, &det::agent::ParseAgentConfigWithEnvironment);
  if (!config.ok()) {
    std::cerr << "error: " << config.status().message() << "\n";
    return 2;
  }
  if (!master_host.empty()) config->master_host = master_host;
  if (master_port >= 0) config->master_port = master_port;
  if (!agent_id.empty()) det::agent::OverrideAgentId(&*config, agent_id);
  if (!pool.empty()) config->resource_pool = pool;
  if (!slot_type.empty()) config->devices.slot_type = slot_type;
  if (!work_dir.empty()) config->work_dir = det::agent::NormalizedDir(work_dir);
  if (artificial_slots >= 0) config->devices.artificial_slots = artificial_slots;
  if (plaintext) config->security.plaintext = true;
  if (!container_runtime.empty()) {  // one of the runtimes' names: CLI11 checked it
    config->container_runtime = *det::agent::ContainerRuntimeNamed(container_runtime);
  }
  if (!docker_socket.empty()) config->docker.socket = docker_socket;
  if (!container_master_host.empty()) config->container_master_host = container_master_host;
  if (container_master_port >= 0) config->container_master_port = container_master_port;
  if (int rc = det::SetUpLogging(config->log, log_level, log_format); rc != 0) return rc;

  det::agent::KeepFromTasks(config_path, "the agent's config");
  std::atomic<bool>& stop = det::InstallStopSignals();
  det::agent::Agent agent(*config, det::RealClock::Instance());
  return agent.Run(stop);
}
