#pragma once

// What a workload's folder says of it, for the runner that started it and for a later agent that
// adopts it: the record `workload.json` (its shim's pid and how far its output is committed at the
// master), how it ended (the shim's `exit_status`, a container pump's `container_end`), and whether
// a pid is still its shim.

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

#include "bus/catalog/workload.h"
#include "common/status.h"

namespace det::agent {

struct WorkloadRecord {
  std::string allocation_id;
  std::string task_id;
  pid_t pid = -1;  // the shim (or a container's pump under it); -1: none
  bool kill_requested = false;
  int64_t stdout_offset = 0;  // committed at the master: a later agent ships from here
  int64_t stderr_offset = 0;
};

// Rewrites `dir`/workload.json in place.
Status WriteWorkloadRecord(const std::string& dir, const WorkloadRecord& record);
// The record in `dir`; nullopt when there is none or it is not a JSON object. A record with
// fields of the wrong type is logged and read with pid -1 (its workload is taken as ended).
std::optional<WorkloadRecord> ReadWorkloadRecord(const std::string& dir);

// The ending the shim wrote ("exit N", "signal N", "start-failed why") or, first, the one a
// container's pump wrote ("oom N", "start-failed why", "lost why"), as a TERMINATED state (exit
// code 128 + N for a signal) with its failure type: Killed when a stop was asked for.
bus::WorkloadState WorkloadEnding(const std::string& exit_status, const std::string& container_end,
                                  bool kill_requested);

// Whether `pid` is the shim of the workload in `dir` (and not a reused pid): a live group leader
// running the shim program in that folder.
bool IsShimOf(pid_t pid, const std::string& dir);
// Whether `pid` has exited and waits to be reaped.
bool IsZombie(pid_t pid);

// The file `name` in `dir` without trailing white space; empty when it cannot be read.
std::string FileText(const std::string& dir, const char* name);

}  // namespace det::agent
