#pragma once

#include "agent/shim_launcher.h"
#include "agent/workload_runtime.h"
#include "agent/workload_spawn.h"

namespace det::agent {

// Workloads as processes: the shim (shim/workload_shim.h) runs the start's argv with its
// environment (workload_spawn.h), as the start's account when it names one. A run that wants
// Determined's info files (its task sets DET_TASK_TYPE) gets the folder `.det/run` in its
// working folder, which the shim shows it at /run/determined (its info files in info/). Nothing of
// a workload outlives its process group, so there is nothing to clean up, adopt again or sweep.
class ProcessRuntime final : public WorkloadRuntime {
 public:
  // `shims` and `host.slots` outlive the runtime.
  ProcessRuntime(ShimLauncher& shims, WorkloadHost host) : shims_(shims), host_(host) {}

  Result<pid_t> Spawn(const bus::WorkloadStart& start, const std::string& dir) override;
  bool ReportsPhases() const override { return false; }
  std::string Phase(const std::string&) const override { return ""; }
  Duration PrepareStop(const std::string&, Duration) override { return Duration::zero(); }
  void CleanUp(const std::string&) override {}
  std::string Ending(const std::string&) const override { return ""; }
  bool Owns(const std::string&) const override { return true; }
  std::optional<pid_t> Readopt(const std::string&, const std::string&) override {
    return std::nullopt;
  }
  void Sweep(const std::set<std::string>&) override {}
  std::string Where(const std::string&) const override { return ""; }

 private:
  ShimLauncher& shims_;
  WorkloadHost host_;
};

}  // namespace det::agent
