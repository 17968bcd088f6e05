#pragma once

#include <spawn.h>
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"

namespace det {

// Installs SIGINT/SIGTERM handlers that set the returned flag (and nothing else), so a main loop
// can stop cleanly. Idempotent.
std::atomic<bool>& InstallStopSignals();

// Raises the soft limit on open files to the hard limit (a master holds one connection per agent)
// and returns the new soft limit.
uint64_t RaiseOpenFileLimit();

// This host's name, for default agent ids.
std::string HostName();

// Initialises `attr` for a child with an empty signal mask and the default handling of SIGPIPE,
// SIGTERM, SIGINT, SIGHUP and SIGCHLD (whatever this process ignores or handles), plus `flags`
// (POSIX_SPAWN_SETPGROUP, POSIX_SPAWN_SETSID, ...). The caller destroys it (SpawnPrepared does).
void InitSpawnWithDefaultSignals(posix_spawnattr_t& attr, short flags);

// posix_spawn of argv[0] (a path) with `argv` and exactly `env` ("KEY=value" entries), with the
// caller's prepared `actions` and `attr`, which it destroys. Unavailable, naming the program,
// when it cannot start.
Result<pid_t> SpawnPrepared(const std::vector<std::string>& argv,
                            const std::vector<std::string>& env,
                            posix_spawn_file_actions_t& actions, posix_spawnattr_t& attr);

// Starts argv[0] (a path) with `argv` in a session of its own, stdin from /dev/null, stdout and
// stderr appended to `log_path`, no other descriptor of this process, and this process's
// environment plus `extra_env`. The caller reaps it (waitpid) or lets it outlive this process.
Result<pid_t> SpawnDetached(const std::vector<std::string>& argv,
                            const std::map<std::string, std::string>& extra_env,
                            const std::string& log_path);

// A process SpawnDetached started (the leader of its own session) and its DET_* environment.
struct TaggedProcess {
  pid_t pid = -1;
  std::map<std::string, std::string> env;  // DET_* variables only
};
// The live session leaders whose environment has `key`=`value` (processes of other users, which
// cannot be read, and exited ones are left out).
std::vector<TaggedProcess> FindSessionLeaders(const std::string& key, const std::string& value);

// The program that leads each workload's process group (agent/shim/workload_shim.h), installed next
// to det-agent.
inline constexpr const char* kWorkloadShimProgram = "det-workload-shim";
// The live process groups whose leader runs `program` (its executable's file name) and works (its
// cwd) in `folder` or below it. With kWorkloadShimProgram and an agent's work folder: the workloads
// that agent started, each led by its shim in the workload's own folder. Workloads outlive their
// agent by design (a restarted agent adopts them); this finds them when a whole cluster goes.
// Other users' processes are seen only by root.
std::vector<pid_t> ProcessGroupsLedBy(const std::string& program, const std::string& folder);
// Whether `pid` has not exited, leads its process group, runs `program` (its executable's file
// name) and works (its cwd) in `folder` itself (the same folder, however named). With
// kWorkloadShimProgram and a workload's folder: whether `pid` is that workload's shim.
bool LeadsGroupIn(pid_t pid, const std::string& program, const std::string& folder);
// SIGTERM to each group, then SIGKILL to them all (what a leader left behind too) once every
// leader has exited or `grace` has passed.
void StopProcessGroups(const std::vector<pid_t>& groups, std::chrono::milliseconds grace);

// Whether process `pid` exists and has not exited (a zombie, exited but not reaped, has: where
// PID 1 does not reap, as in some containers, kill(pid, 0) alone would call it alive).
bool ProcessRunning(pid_t pid);

// A sibling program of the running one: `name` in the same folder (installed), else in the build
// tree's `folder` next to it (build/<folder>/<name>). DET_BIN_DIR, when set, wins.
std::string SiblingProgram(const std::string& folder, const std::string& name);

}  // namespace det
