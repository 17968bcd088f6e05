// The WorkloadRunner's docker path (container_runtime: docker): a workload whose start names an
// image runs in a container through its pump (docker_pump.h); the runner follows the pump's
// phases, adopts a container whose pump is gone and removes containers no workload owns.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "agent/docker_client.h"
#include "agent/docker_workload.h"
#include "agent/workload_record.h"
#include "agent/workload_runner.h"
#include "agent/workload_shim.h"

namespace det::agent {

void WorkloadRunner::ReportPhase(const std::string& allocation_id, Workload& w, Reports* out) {
  if (!w.in_container) return;
  const std::string phase = FileText(w.dir, kContainerPhaseFile);
  if (phase.empty() || phase == w.phase) return;
  // The pump goes PULLING → STARTING → RUNNING; the master hears each step once, in order.
  static constexpr std::string_view kOrder[] = {bus::kWorkloadPulling, bus::kWorkloadStarting,
                                                bus::kWorkloadRunning};
  auto rank = [](std::string_view p) {
    return static_cast<int>(std::find(std::begin(kOrder), std::end(kOrder), p) - kOrder);
  };
  if (rank(phase) == 3) return;  // not a phase
  for (int step = rank(w.phase) + 1; step <= rank(phase); ++step) {
    out->states.push_back({allocation_id, w.task_id, std::string(kOrder[step]), 0, "", ""});
  }
  w.phase = phase;
}

bool WorkloadRunner::RestartPump(const std::string& allocation_id, Workload& w) {
  // A container outlives its pump (the agent's service may have taken the pump with it): a new
  // pump adopts it, unless the old one recorded the end.
  if (!w.in_container || !FileText(w.dir, kExitStatusFile).empty() ||
      !FileText(w.dir, kContainerEndFile).empty()) {
    return false;
  }
  Result<pid_t> pid = SpawnPump(w.dir);
  if (!pid.ok()) {
    spdlog::warn("{}: cannot start a pump for its container: {}", allocation_id,
                 pid.status().message());
    return false;
  }
  w.pid = *pid;
  w.own_child = true;
  SaveState(allocation_id, w);
  spdlog::info("{}: its pump had gone; a new one adopts container {}", allocation_id,
               ContainerName(allocation_id));
  return true;
}

void WorkloadRunner::RemoveOrphanContainers() {
  DockerClient docker(options_.docker_socket);
  Result<std::vector<ContainerState>> ours = docker.List(kAgentIdLabel, options_.agent_id);
  if (!ours.ok()) {
    spdlog::warn("cannot list this agent's containers: {}", ours.status().message());
    return;
  }
  for (const ContainerState& container : *ours) {
    auto label = container.labels.find(kAllocationIdLabel);
    if (label != container.labels.end() && workloads_.count(label->second)) continue;
    spdlog::info("removing container {}: no workload of this agent runs in it", container.id);
    (void)docker.Remove(container.id);
  }
}

void WorkloadRunner::RemoveContainer(const std::string& allocation_id) const {
  DockerClient docker(options_.docker_socket);
  if (Status removed = docker.Remove(ContainerName(allocation_id)); !removed.ok()) {
    spdlog::warn("{}: {}", allocation_id, removed.message());
  }
}

}  // namespace det::agent
