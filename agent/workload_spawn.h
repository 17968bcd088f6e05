#pragma once

// How a workload is started, whatever its runtime: its argv and environment, the account it runs
// as and the folders it gets, the shim it runs under (shim/workload_shim.h) as the leader of its
// own process group.

#include <sys/types.h>

#include <string>
#include <vector>

#include "bus/catalog/agent.h"
#include "bus/catalog/workload.h"
#include "common/status.h"

namespace det::agent {

// The argv of an entrypoint: a single string runs through /bin/sh -c unless it is one plain word
// (e.g. "true"), which is executed directly (the same result, without a shell).
std::vector<std::string> WorkloadArgv(const std::vector<std::string>& entrypoint);

// Who starts the workload and on which slots: what its environment is made from.
struct WorkloadHost {
  std::string agent_id;
  const std::vector<bus::SlotInfo>* slots = nullptr;  // the agent's
};

// The agent's basics (not its credentials, nor the local provider's tags) when `inherit`, then
// the task's variables, then det's own, which the task cannot override: DET_MASTER, DET_TASK_ID,
// DET_ALLOCATION_ID, DET_AGENT_ID, DET_SLOT_IDS, DET_SESSION_TOKEN, DET_INFO_DIR (`info_dir`,
// where the run finds Determined's info files; "" for none) and, when `inherit` (a process, not a
// container, which sees only its own GPUs), CUDA_VISIBLE_DEVICES (its cuda slots).
std::vector<std::string> WorkloadEnvironment(const bus::WorkloadStart& start,
                                             const WorkloadHost& host, bool inherit,
                                             const std::string& info_dir);

// The shim's instruction to run the workload as `account` (workload_shim.h): the variable
// kRunAsVariable="uid:gid:group,...:home:user". The supplementary groups and home come from this
// host's account database when it has the user under that uid; else the primary group alone and
// `dir` as home.
std::string RunAsVariable(const bus::AgentUserGroup& account, const std::string& dir);
// What this host knows of `account`: its groups (primary first, then the supplementary ones from
// the account database when it has the user under that uid; else the primary alone) and its home
// (else `dir`).
struct AccountOnHost {
  std::vector<gid_t> groups;
  std::string home;
};
AccountOnHost AccountGroups(const bus::AgentUserGroup& account, const std::string& dir);
// Gives the folder at `path` and everything in it to `account` (owner uid:gid; the folder's mode
// 0700) when this agent runs as root; changes nothing otherwise (the agent cannot switch users:
// its tasks run as itself).
Status GiveFolder(const std::string& path, const bus::AgentUserGroup& account);
// The account `user` of this host (getpwnam): uid, primary gid and group name. NotFound names it.
Result<bus::AgentUserGroup> HostAccount(const std::string& user);
// Keeps the agent's own file at `path` (its key, its config) from the tasks it runs as other
// accounts: as root, a file others may read or write becomes 0600 (said in the log). Nothing
// happens for "" or when the agent is not root (then its tasks run as itself).
void KeepFromTasks(const std::string& path, const std::string& what);
// Readies `path`, a folder tasks of several accounts write into (the checkpoint storage), for a
// task that runs as another account: made if missing; if it is the agent's own and others cannot
// write it, its mode becomes 1777 (as /tmp: anyone adds entries, only an entry's owner removes or
// renames it). A folder of any other owner, or one the agent does not run as root for, is left as
// it is (its operator chose who writes there).
Status OpenSharedFolder(const std::string& path);
// Takes a (recycled) folder back for the agent's own user (mode 0755): a workload that runs as the
// agent gets none of another account's folders.
void ReclaimFolder(const std::string& path);

// The program `name` in this executable's folder (the shim and the pump sit beside det-agent).
std::string BesideThisProgram(const std::string& name);

// Starts `shim` over `argv` in `dir` as the leader of a new process group: stdin /dev/null,
// stdout and stderr appended to the folder's output files, default signal handling. Its pid.
Result<pid_t> SpawnUnderShim(const std::string& shim, const std::vector<std::string>& argv,
                             const std::vector<std::string>& env, const std::string& dir);

}  // namespace det::agent
