#pragma once

// The process environment, injectable: the cloud clients read their settings (credentials files,
// metadata endpoints, projects and regions) through one, and tests pass a fixed set.

#include <functional>
#include <map>
#include <optional>
#include <string>

namespace det {

struct Environment {
  std::function<std::optional<std::string>(const std::string&)> get;  // an environment variable
  static Environment Process();
  // A fixed set of variables (tests).
  static Environment Of(std::map<std::string, std::string> variables);
  // The variable's value, or `fallback` when it is unset or empty.
  std::string GetOr(const std::string& name, const std::string& fallback) const;
};

// Why a user may not set the variable `name` for a workload (an experiment's
// environment_variables, a command's env), or "" when they may: it must be a POSIX name
// ([A-Za-z_][A-Za-z0-9_]*) and not one det sets itself (DET_*, CUDA_VISIBLE_DEVICES,
// NVIDIA_VISIBLE_DEVICES: a workload could otherwise speak for another or take GPUs not its own).
std::string WhyNotAWorkloadVariable(const std::string& name);

// Whether a workload run as a process inherits the agent's variable `name`: the system's basics
// (PATH, HOME, USER, LANG, LC_*, TZ, TMPDIR, ...), Python, CUDA/NCCL and proxy settings. Nothing
// else (cloud credentials, det's own login, whatever the agent's shell held) reaches workloads.
bool WorkloadInherits(const std::string& name);

}  // namespace det
