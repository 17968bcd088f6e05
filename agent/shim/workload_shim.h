#pragma once

// The process that stands between the agent and a workload:
// `det-workload-shim __workload DIR ARGV...` (a libc-only program next to det-agent).
//
// The agent starts it as the leader of the workload's process group, with stdout and stderr
// already pointing at files in DIR. It starts ARGV (the workload), ignores the stop signals the
// agent sends to the group (the workload gets them), waits for the workload and writes how it
// ended to DIR/exit_status ("exit N" or "signal N") before exiting the same way. So the end of a
// workload is known even when the agent that started it has died and another adopted it.

#include <sys/types.h>

#include <string>
#include <vector>

namespace det::agent {

inline constexpr const char* kWorkloadShimArg = "__workload";
// Determined's on-cluster folder: a run's own folder (under its working folder) that it sees at
// kRunMount, /run/determined: its info files in info/ (kRunInfoFolder, seen at kRunInfoMount),
// and what the trial launcher puts there (train/model, train/logs, workdir). When DIR/kRunFolder
// exists, the shim starts the workload in a mount namespace of its own with that folder
// bind-mounted at kRunMount (needs CAP_SYS_ADMIN: the agent runs as root); when it cannot, it
// says why on the workload's stderr and starts it anyway.
inline constexpr const char* kRunFolderParent = ".det";  // hidden from the run
inline constexpr const char* kRunFolder = ".det/run";
inline constexpr const char* kRunMount = "/run/determined";
inline constexpr const char* kRunInfoFolder = ".det/run/info";
inline constexpr const char* kRunInfoMount = "/run/determined/info";
// The shim's files in DIR: the workload's output (stdin is /dev/null) and how it ended.
inline constexpr const char* kStdoutFile = "stdout.log";
inline constexpr const char* kStderrFile = "stderr.log";
inline constexpr const char* kExitStatusFile = "exit_status";
// In the shim's environment (never the workload's): run the workload as
// "uid:gid:group,...:home:user". As root the shim sets the groups, gid and uid before exec, and
// HOME, USER and LOGNAME; otherwise it cannot, says so on the workload's stderr and runs it as
// itself.
inline constexpr const char* kRunAsVariable = "DET_RUN_AS";

// The account kRunAsVariable names: "uid:gid:group,...:home:user" (ids 0 to 2^31-1, at least one
// group, a user name).
struct RunAs {
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;
  std::string home;
  std::string user;
};
// False when `text` is not of that form.
bool ParseRunAs(const std::string& text, RunAs* out);

// argv[0] is DIR, argv[1..] the workload's argv. Returns the process exit code.
int RunWorkloadShim(int argc, char** argv);

}  // namespace det::agent
