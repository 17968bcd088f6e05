#pragma once

#include <sys/types.h>

#include <set>
#include <string>

#include "bus/catalog/workload.h"
#include "common/clock.h"
#include "common/status.h"

namespace det::agent {

// Where a workload runs: as processes (ProcessRuntime, process_runtime.h) or in a container that
// its pump drives (DockerRuntime, docker_runtime.h). The runner (workload_runner.h) owns what is
// common to both: the workload's folder, its output files, the shim that leads its process group
// and records its exit, the signals and the records that let a restarted agent adopt it. A
// runtime decides what that shim runs and what else a workload leaves behind.
//
// Threading: not thread-safe; the runner's, on the agent's loop.
class WorkloadRuntime {
 public:
  virtual ~WorkloadRuntime() = default;

  // Starts `start` in its (prepared) folder `dir`: the pid of its shim, this process's child and
  // the leader of the workload's process group; or why it could not (nothing left running).
  virtual Result<pid_t> Spawn(const bus::WorkloadStart& start, const std::string& dir) = 0;

  // Whether the runtime reports the workload's steps itself (Phase) after the spawn; else the
  // runner reports STARTING before the spawn and RUNNING once it succeeded.
  virtual bool ReportsPhases() const = 0;
  // The step the workload in `dir` has reached (PULLING, STARTING, RUNNING), "" while none is
  // known. Only for a runtime that ReportsPhases().
  virtual std::string Phase(const std::string& dir) const = 0;

  // Before the group gets SIGTERM: tells the workload in `dir` how long it has (`grace`) and
  // returns how much longer than the grace the runner waits before SIGKILL.
  virtual Duration PrepareStop(const std::string& dir, Duration grace) = 0;
  // The workload's shim has ended: removes what the workload left outside its process group.
  virtual void CleanUp(const std::string& allocation_id) = 0;
  // How the workload in `dir` ended as the runtime recorded it, beside the shim's exit status
  // (docker_workload.h's container_end); "" when it recorded nothing.
  virtual std::string Ending(const std::string& dir) const = 0;

  // After an agent restart: whether the workload left in `dir` is this runtime's.
  virtual bool Owns(const std::string& dir) const = 0;
  // For an adopted workload of this runtime whose shim is gone but whose work may go on (a
  // container): a new shim that adopts it, or nullopt when there is nothing to adopt.
  virtual std::optional<pid_t> Readopt(const std::string& allocation_id,
                                       const std::string& dir) = 0;
  // Once the workloads are adopted: removes what this runtime left for allocations not in
  // `known` (containers of this agent that no workload owns).
  virtual void Sweep(const std::set<std::string>& known) = 0;

  // Where the workload runs, for the log: "" or " in container det-<allocation>".
  virtual std::string Where(const std::string& allocation_id) const = 0;
};

}  // namespace det::agent
