#pragma once

// How the agent starts workloads' shims: through a shim server (shim_server.h) it keeps running,
// which clones itself for each workload instead of the agent executing the shim program each
// time; by executing the shim program itself (SpawnUnderShim) when a request is too large for the
// server or the server cannot be used.
//
// Either way the shim is this process's child, leads the workload's process group, works in the
// workload's folder and is reaped by the caller (waitpid). A request the server never received
// goes to a new server. When the server ends after receiving one without answering, the launcher
// looks for the shim in the folder (it may have started) and otherwise reports the start failed,
// never sending it again: a workload is never started twice. A server that fails twice in a row
// is given up for the shim program (said in the log).
//
// Threading: not thread-safe; the workload runner's, on the agent's loop.

#include <sys/types.h>

#include <string>
#include <vector>

#include "agent/shim/shim_protocol.h"
#include "common/status.h"

namespace det::agent {

class ShimLauncher {
 public:
  explicit ShimLauncher(std::string shim_program);
  ~ShimLauncher();  // ends the server
  ShimLauncher(const ShimLauncher&) = delete;
  ShimLauncher& operator=(const ShimLauncher&) = delete;

  // As SpawnUnderShim (workload_spawn.h): the shim over `argv` in `dir`, the leader of a new
  // process group, stdin /dev/null, stdout and stderr appended to the folder's output files.
  Result<pid_t> Spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                      const std::string& dir);

  pid_t server_pid() const { return server_pid_; }  // -1 while none runs

 private:
  enum class Outcome { kAnswered, kNotSent, kNoAnswer };
  Status StartServer();
  void StopServer();
  Outcome Ask(const std::string& payload, ShimReply* reply);
  Result<pid_t> Answered(const ShimReply& reply, const std::string& dir);
  void NoteFailure();  // a server that ended without answering; the second in a row gives up

  std::string shim_program_;
  int socket_ = -1;
  pid_t server_pid_ = -1;
  int failures_in_a_row_ = 0;
  bool given_up_ = false;
};

}  // namespace det::agent
