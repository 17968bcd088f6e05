#pragma once

// A workload in a Docker container (the agent's `runtime: docker`): what the runner hands the
// pump (docker_pump.h) in the workload's folder, and what the pump leaves there.
//
// The runner writes `container.json` (DockerWorkload below) and starts `det-docker-pump DIR` as
// the workload, under the shim (workload_shim.h): the pump stands in for the container. Its
// stdout and stderr are the container's, so the runner follows and ships a container's output as
// a process's, and the shim records the pump's exit code, which is the container's. The pump
// leaves, beside the agent's own files:
//   container_id     the container's id, once created (a later pump adopts it, never re-creates)
//   container_phase  PULLING, STARTING or RUNNING: what the runner reports to the master
//   container_end    how it ended when the exit code alone does not say: "oom N" (the kernel
//                    killed it for memory), "start-failed WHY" (no image, the engine refused to
//                    create or start it), "lost WHY" (it vanished while nobody watched)
//   log_cursor       the engine's timestamp of the last output line written, so that a pump
//                    started again after an agent restart resumes the output where it stopped
// and reads `stop_grace` (seconds), written by the runner before it sends SIGTERM.
//
// Containers are named `det-<allocation id>` and labelled det.agent-id, det.allocation-id and
// det.task-id: a restarted agent finds its containers by label.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bus/catalog/agent.h"
#include "bus/catalog/workload.h"
#include "common/status.h"

namespace det::agent {

// The only part of the workload's folder a container sees (mounted at its own path, its working
// folder): the spec, its id and the agent's files beside it are out of the container's reach,
// since a restarted agent and pump trust them.
inline constexpr const char* kContainerFolder = "container";
inline constexpr const char* kContainerSpecFile = "container.json";
inline constexpr const char* kContainerIdFile = "container_id";
inline constexpr const char* kContainerPhaseFile = "container_phase";
inline constexpr const char* kContainerEndFile = "container_end";
inline constexpr const char* kLogCursorFile = "log_cursor";
inline constexpr const char* kStopGraceFile = "stop_grace";

inline constexpr const char* kAgentIdLabel = "det.agent-id";
inline constexpr const char* kAllocationIdLabel = "det.allocation-id";
inline constexpr const char* kTaskIdLabel = "det.task-id";

// The exit code of a pump that could not start its container (docker run's own).
inline constexpr int kContainerStartFailedCode = 125;

std::string ContainerName(const std::string& allocation_id);

// container.json.
struct DockerWorkload {
  std::string socket;         // the engine's unix socket
  std::string name;           // ContainerName(allocation)
  std::string image;          // what the create body runs
  bool force_pull = false;    // pull even when the image is present
  std::string registry_auth;  // X-Registry-Auth JSON or ""; a secret (the file is 0600)
  nlohmann::json create;      // the body of POST /containers/create

  nlohmann::json ToJson() const;
  static Result<DockerWorkload> FromJson(const std::string& text);
};

// What the runner knows when it starts a workload in a container.
struct ContainerRequest {
  const bus::WorkloadStart* start = nullptr;
  std::string agent_id;
  std::string dir;  // the container's folder (kContainerFolder): its working folder inside too
  std::vector<std::string> argv;       // what runs
  std::vector<std::string> env;        // KEY=VALUE: the DET_* variables and the task's own
  std::vector<bus::SlotInfo> slots;    // the workload's slots
  std::string network_mode;            // "host", "bridge", a network's name
  std::vector<std::string> group_add;  // supplementary group ids of the user (HostConfig.GroupAdd)
  std::vector<std::string> hidden;     // paths covered by an empty read-only tmpfs inside
};

// The create body: the image for the slots' type, argv, env (and HOME, the folder, unless the
// task sets it), the folder mounted at its own path and as working folder, the task's binds,
// shm size, network mode, the GPUs by uuid (nvidia device request), the start's account as the
// user with its supplementary groups (else the agent's uid and gid), the hidden paths (tmpfs), an
// init process, labels.
nlohmann::json ContainerCreateBody(const ContainerRequest& request);

}  // namespace det::agent
