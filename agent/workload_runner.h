#pragma once

#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "agent/log_shipper.h"
#include "agent/output_follower.h"
#include "agent/workload_folders.h"
#include "agent/workload_runtime.h"
#include "agent/workload_spawn.h"
#include "bus/catalog/agent.h"
#include "bus/catalog/workload.h"
#include "common/clock.h"

namespace det::agent {

// Runs workloads as processes that outlive the agent, and adopts them again after a restart.
//
// Each workload gets a folder `<work_dir>/<allocation id>` (its working directory; recycled from
// workload to workload, see workload_folders.h) and runs under
// a shim (workload_shim.h) that leads its process group, so a stop reaches everything it started
// and its exit status is written to the folder. stdin is /dev/null; stdout and stderr go to
// `stdout.log` and `stderr.log` there, which the runner follows (inotify) line by line, stamping
// each line with the time read and its offset, and hands to the LogShipper. The environment is
// the agent's plus DET_MASTER, DET_TASK_ID, DET_ALLOCATION_ID, DET_AGENT_ID, DET_SLOT_IDS,
// DET_SESSION_TOKEN, CUDA_VISIBLE_DEVICES (the GPUs of its cuda slots; empty for none) and the
// task's own variables.
//
// `workload.json` in the folder records the allocation, the shim's pid and how far its output is
// committed at the master. A runner that starts (Recover) adopts every folder it finds: a live
// shim is followed again from the committed offsets; a finished one is reported ended. A folder
// is retired once the master has recorded the end (Remove).
//
// Output is read only as fast as the master commits it (LogShipper::Full): a workload that writes
// faster than that, or while the master is away, is read later from its files, so the agent's
// memory stays bounded whatever the volume.
//
// When a workload ends, the rest of its group is killed; once its output is read to the end, its
// last log lines are sealed and TERMINATED is reported with the exit code (128 + signal when
// killed by one) and a failure type.
//
// What the shim runs, and what a workload leaves beyond its process group, is its runtime's
// (workload_runtime.h): processes (process_runtime.h), or a container for a start that names an
// image when the agent has the docker runtime (docker_runtime.h). The other parts:
// output_follower.h (the output files), workload_spawn.h (argv, environment, accounts),
// workload_record.h (workload.json, endings, adoption checks).
//
// Threading: not thread-safe; owned by the agent's loop, which polls AppendPollItems()'s items and
// passes them back to Tick().
class WorkloadRunner {
 public:
  struct Options {
    std::string agent_id;
    std::string work_dir;
    std::vector<bus::SlotInfo> slots;
    // Whom a workload runs as when its start names no account (nullopt: the agent's own user).
    std::optional<bus::AgentUserGroup> default_account;
  };
  // The runtimes workloads run in, not owned (they outlive the runner): `processes` for every
  // start, `containers` (null on an agent without one) for a start that names an image.
  struct Runtimes {
    WorkloadRuntime* processes = nullptr;
    WorkloadRuntime* containers = nullptr;
  };
  // What the loop must send, in order: log batches first, then state changes.
  struct Reports {
    std::vector<bus::WorkloadLogs> logs;
    std::vector<bus::WorkloadState> states;
  };

  WorkloadRunner(Options options, const Clock& clock, LogShipper& shipper, Runtimes runtimes);
  ~WorkloadRunner();  // stops following; the workloads keep running

  // Adopts the workloads a previous agent process left in work_dir.
  void Recover(Reports* out);
  void Start(const bus::WorkloadStart& start, Reports* out);
  void Kill(const bus::WorkloadKill& kill);
  // The master recorded the end: the folder goes.
  void Remove(const std::string& allocation_id);
  // The master committed more of the allocation's output: remember how far.
  void OnLogsConfirmed(const std::string& allocation_id);

  // Descriptors to poll: the output watcher and one per process.
  void AppendPollItems(std::vector<zmq::pollitem_t>* items);
  // Reads new output, finishes exited workloads, escalates overdue stops, seals due batches.
  void Tick(const std::vector<zmq::pollitem_t>& items, Reports* out);

  // A RUNNING state for each workload that runs.
  std::vector<bus::WorkloadState> States() const;

 private:
  using Stream = OutputFollower::Stream;
  struct Workload {
    std::string task_id;
    std::string dir;
    pid_t pid = -1;
    bool own_child = false;  // started by this process (else adopted)
    int pidfd = -1;
    Stream out{"stdout"}, err{"stderr"};
    bool kill_requested = false;
    std::optional<MonoTime> kill_deadline;
    WorkloadRuntime* runtime = nullptr;  // one of runtimes_
    std::string phase;                   // for a runtime that reports phases: the one last reported
    // The process ended (its group is killed); the end is reported once the output is read.
    bool ended = false;
    std::optional<int> wait_status;  // how the shim ended, when this process could wait for it
  };

  // The runtime `start` runs in: the containers' when it names an image and the agent has one.
  WorkloadRuntime& RuntimeFor(const bus::WorkloadStart& start) const;
  // The runtime of a workload a previous agent left in `dir`.
  WorkloadRuntime& RuntimeOf(const std::string& dir) const;
  // Starts `start` in its runtime (as the default account when it names none).
  Result<pid_t> SpawnWorkload(const bus::WorkloadStart& start, Workload& w);
  // Reports the workload's phase when its runtime moved it on.
  void ReportPhase(const std::string& allocation_id, Workload& w, Reports* out);
  // An adopted workload whose shim is gone: whether its runtime adopted what still runs.
  bool Readopt(const std::string& allocation_id, Workload& w);
  // Follows both output files from the offsets given.
  Status Follow(const std::string& allocation_id, Workload& w, int64_t out_offset,
                int64_t err_offset);
  // OutputFollower::Drain of one of the workload's streams.
  bool Drain(const std::string& allocation_id, Workload& w, Stream& stream, bool final);
  void CloseStreams(Workload& w);
  // The workload's process ended: what it left behind is killed (or its container removed).
  void End(const std::string& allocation_id, Workload& w, std::optional<int> wait_status,
           Reports* out);
  // Reads an ended workload's output on; once at the end of both files, seals its last lines,
  // reports TERMINATED and returns true (the workload is done here).
  bool Complete(const std::string& allocation_id, Workload& w, Reports* out);
  // Completes ended workloads whose output is read, and reads on where the window had stopped.
  void ReadOn(Reports* out);
  bool Exited(Workload& w, bool pidfd_readable, int* status);
  // Rewrites the workload's record (workload.json) with the offsets committed so far.
  void SaveState(const std::string& allocation_id, const Workload& w) const;

  Options options_;
  const Clock& clock_;
  LogShipper& shipper_;
  WorkloadFolders folders_;
  OutputFollower output_;
  Runtimes runtimes_;
  std::map<std::string, Workload> workloads_;
  size_t poll_first_ = 0;            // where our items start
  std::vector<std::string> polled_;  // allocation of each pidfd item
  MonoTime next_sweep_{};
};

}  // namespace det::agent
