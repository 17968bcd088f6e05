#include "agent/process_runtime.h"

#include <filesystem>

namespace det::agent {

Result<pid_t> ProcessRuntime::Spawn(const bus::WorkloadStart& start, const std::string& dir) {
  // A run that wants Determined's info files (DET_TASK_TYPE) gets a folder of its own for them,
  // shown to it at /run/determined/info by the shim's mount namespace (with the rest of its
  // /run/determined).
  std::string info_dir;
  if (start.env.contains("DET_TASK_TYPE")) {
    info_dir = dir + "/" + kRunInfoFolder;
    std::error_code made;
    std::filesystem::create_directories(info_dir, made);
    if (made) return Internal("cannot make " + info_dir + ": " + made.message());
  }
  std::vector<std::string> env = WorkloadEnvironment(start, host_, true, info_dir);
  if (start.run_as) {  // the shim switches to it (or, on an agent not root, says it cannot)
    DET_RETURN_IF_ERROR(GiveFolder(dir, *start.run_as));
    env.push_back(RunAsVariable(*start.run_as, dir));
  } else {
    ReclaimFolder(dir);
  }
  return shims_.Spawn(WorkloadArgv(start.entrypoint), env, dir);
}

}  // namespace det::agent
