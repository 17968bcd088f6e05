#pragma once

#include <string>
#include <vector>

#include "agent/shim_launcher.h"
#include "agent/workload_runtime.h"
#include "agent/workload_spawn.h"

namespace det::agent {

// The docker runtime's settings a container is made with.
struct ContainerHost {
  WorkloadHost host;
  std::string docker_socket;
  std::string network_mode;
  std::string master_host;  // DET_MASTER's host in the container ("": the master's own)
  int master_port = 0;      // and its port (0: the master's own)
};

// `address` ("scheme://host:port[/path]", the master's URL) with its host replaced by `host`
// and its port by `port`, where given ("" and 0 keep the address's own).
std::string WithHostAndPort(const std::string& address, const std::string& host, int port);
// Writes the spec of `start`'s container to `dir` (0600: it may hold registry credentials) for
// the pump, and makes the container's folder (with Determined's info folder when the run wants
// it, its run folder bound at /run/determined). DET_MASTER and DET_MASTER_URL in it name the master
// as `settings` say containers reach it.
Status WriteContainerSpec(const bus::WorkloadStart& start, const ContainerHost& settings,
                          const std::vector<std::string>& argv, const std::string& dir);

// Workloads in Docker containers (the agent's `container_runtime: docker`, for starts that name an
// image): the runtime writes the container's spec to the workload's folder and runs the pump
// (docker/docker_pump.h) under the shim as the workload; the pump pulls, creates, starts or adopts
// the container, copies its output and records its phases and end in the folder
// (docker/docker_workload.h). A container outlives its pump: after an agent restart a new pump
// adopts it, and containers of this agent that no workload owns are removed.
class DockerRuntime final : public WorkloadRuntime {
 public:
  struct Options {
    ContainerHost containers;  // its host.slots outlive the runtime
    std::string pump_program;  // empty: det-docker-pump next to this executable
  };
  // `shims` outlives the runtime.
  DockerRuntime(ShimLauncher& shims, Options options);

  Result<pid_t> Spawn(const bus::WorkloadStart& start, const std::string& dir) override;
  bool ReportsPhases() const override { return true; }
  std::string Phase(const std::string& dir) const override;
  Duration PrepareStop(const std::string& dir, Duration grace) override;
  void CleanUp(const std::string& allocation_id) override;
  std::string Ending(const std::string& dir) const override;
  bool Owns(const std::string& dir) const override;
  std::optional<pid_t> Readopt(const std::string& allocation_id, const std::string& dir) override;
  void Sweep(const std::set<std::string>& known) override;
  std::string Where(const std::string& allocation_id) const override;

 private:
  Result<pid_t> SpawnPump(const std::string& dir);

  ShimLauncher& shims_;
  Options options_;
};

}  // namespace det::agent
