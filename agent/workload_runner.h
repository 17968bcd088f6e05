#pragma once

#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "agent/log_shipper.h"
#include "bus/catalog/agent.h"
#include "bus/catalog/workload.h"
#include "common/clock.h"

namespace det::agent {

// Runs workloads as child processes of the agent.
//
// Each workload is its own process group (so a stop reaches everything it started) with its own
// working folder `<work_dir>/<allocation id>`, stdin from /dev/null, and the agent's environment
// plus DET_MASTER, DET_TASK_ID, DET_ALLOCATION_ID, DET_AGENT_ID, DET_SLOT_IDS,
// DET_SESSION_TOKEN, CUDA_VISIBLE_DEVICES (the GPUs of its cuda slots; empty for none) and the
// task's own variables. Its stdout and stderr are read line by line, stamped with the time read,
// and handed to the LogShipper. When the main process exits, what it wrote is drained, the rest of
// its group is killed, its last log lines are sealed and TERMINATED is reported with the exit code
// (128 + signal when killed by one) and a failure type.
//
// Threading: not thread-safe; owned by the agent's loop, which polls PollItems() and then calls
// OnReadable() and Tick().
class WorkloadRunner {
 public:
  struct Options {
    std::string agent_id;
    std::string work_dir;
    std::vector<bus::SlotInfo> slots;
  };
  // What the loop must send, in order: log batches first, then state changes.
  struct Reports {
    std::vector<bus::WorkloadLogs> logs;
    std::vector<bus::WorkloadState> states;
  };

  WorkloadRunner(Options options, const Clock& clock, LogShipper& shipper);
  ~WorkloadRunner();  // kills what still runs

  void Start(const bus::WorkloadStart& start, Reports* out);
  void Kill(const bus::WorkloadKill& kill);

  // Pipe and process descriptors to poll for input.
  void AppendPollItems(std::vector<zmq::pollitem_t>* items) const;
  // Reads what is waiting on every pipe, reaps exited processes and escalates overdue stops.
  void Tick(Reports* out);

  // A RUNNING state for each workload that runs.
  std::vector<bus::WorkloadState> States() const;
  // Forgets the workloads without stopping them (the agent is exiting after losing the master).
  void Abandon();

  size_t running() const { return workloads_.size(); }
  bool IsRunning(const std::string& allocation_id) const {
    return workloads_.count(allocation_id) > 0;
  }

 private:
  struct Stream {
    int fd = -1;
    std::string stdtype;
    std::string partial;  // bytes after the last newline
  };
  struct Workload {
    std::string task_id;
    pid_t pid = -1;
    int pidfd = -1;
    Stream out, err;
    bool kill_requested = false;
    std::optional<MonoTime> kill_deadline;
  };

  Result<pid_t> Spawn(const bus::WorkloadStart& start, int out_fd, int err_fd,
                      const std::string& dir) const;
  std::vector<std::string> Environment(const bus::WorkloadStart& start) const;
  void Drain(const std::string& allocation_id, Workload& w, Stream& stream, bool final);
  void Emit(const std::string& allocation_id, const Workload& w, const std::string& stdtype,
            std::string text);
  void Reap(const std::string& allocation_id, Workload& w, int status, Reports* out);

  Options options_;
  const Clock& clock_;
  LogShipper& shipper_;
  std::map<std::string, Workload> workloads_;
};

}  // namespace det::agent
