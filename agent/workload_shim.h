#pragma once

// The process that stands between the agent and a workload:
// `det-workload-shim __workload DIR ARGV...` (a libc-only program next to det-agent).
//
// The agent starts it as the leader of the workload's process group, with stdout and stderr
// already pointing at files in DIR. It starts ARGV (the workload), ignores the stop signals the
// agent sends to the group (the workload gets them), waits for the workload and writes how it
// ended to DIR/exit_status ("exit N" or "signal N") before exiting the same way. So the end of a
// workload is known even when the agent that started it has died and another adopted it.

namespace det::agent {

inline constexpr const char* kWorkloadShimArg = "__workload";
inline constexpr const char* kExitStatusFile = "exit_status";

// argv[0] is DIR, argv[1..] the workload's argv. Returns the process exit code.
int RunWorkloadShim(int argc, char** argv);

}  // namespace det::agent
