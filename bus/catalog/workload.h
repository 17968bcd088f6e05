#pragma once

// Workloads on the agent channel: the master starts and kills them, the agent reports their states
// and ships their output.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bus/codec.h"

namespace det::bus {

// The states a workload passes through, as Determined names them. PULLING: preparing what it runs
// in (the process runtime: its folder and output files).
inline constexpr std::string_view kWorkloadAssigned = "ASSIGNED";
inline constexpr std::string_view kWorkloadPulling = "PULLING";
inline constexpr std::string_view kWorkloadStarting = "STARTING";
inline constexpr std::string_view kWorkloadRunning = "RUNNING";
inline constexpr std::string_view kWorkloadTerminated = "TERMINATED";

// Why a workload ended other than by exiting 0.
inline constexpr std::string_view kFailureTaskError = "TaskError";      // exited non-zero / signal
inline constexpr std::string_view kFailureStartFailed = "StartFailed";  // could not be started
inline constexpr std::string_view kFailureKilled = "Killed";            // killed on request
inline constexpr std::string_view kFailureAgentFailed = "AgentFailed";  // its agent was lost

// The container a workload runs in when its agent's runtime is docker (empty `image` and
// `images`: run it as a process even there). Set from an experiment's or command's `environment`
// and `resources.shm_size`.
struct ContainerSpec {
  std::string image;                          // environment.image as one name
  std::map<std::string, std::string> images;  // environment.image per slot type: cpu, cuda
  bool force_pull = false;                    // environment.force_pull_image
  // environment.registry_auth as Docker's X-Registry-Auth JSON ({username, password,
  // serveraddress} or {identitytoken}); a secret: never logged.
  std::string registry_auth_json;
  int64_t shm_size_bytes = 0;  // 0: the engine's default
  // Host folders to mount: "host:container" or "host:container:ro" (checkpoint storage).
  std::vector<std::string> binds;
  bool operator==(const ContainerSpec&) const = default;
  bool empty() const { return image.empty() && images.empty(); }
  // The image for a workload on slots of `slot_type` ("cuda", "cpu"; "" for none): its own
  // entry, else the cpu one, else `image`.
  std::string ImageFor(const std::string& slot_type) const {
    if (auto it = images.find(slot_type.empty() ? "cpu" : slot_type); it != images.end()) {
      return it->second;
    }
    if (!image.empty()) return image;
    auto cpu = images.find("cpu");
    return cpu == images.end() ? "" : cpu->second;
  }
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("image", s.image);
    v("images", s.images);
    v("force_pull", s.force_pull);
    v("registry_auth_json", s.registry_auth_json);
    v("shm_size_bytes", s.shm_size_bytes);
    v("binds", s.binds);
  }
};

// The Unix account a workload runs as on its agent (Determined's agent user group): a user's link
// (`det user link-with-agent-user`), else the cluster's security.default_task.
struct AgentUserGroup {
  int32_t uid = 0;
  int32_t gid = 0;
  std::string user;
  std::string group;
  bool operator==(const AgentUserGroup&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("uid", s.uid, kRequired);
    v("gid", s.gid, kRequired);
    v("user", s.user, kRequired);
    v("group", s.group, kRequired);
  }
};

// Master -> agent (reliable).
struct WorkloadStart {
  static constexpr std::string_view kType = "workload.start";
  std::string allocation_id;
  std::string task_id;
  std::vector<std::string> entrypoint;  // one element: a /bin/sh -c command; more: argv
  std::map<std::string, std::string> env;
  std::vector<std::string> slot_ids;
  std::string master_address;  // DET_MASTER for the workload
  std::string session_token;   // DET_SESSION_TOKEN for the workload
  ContainerSpec container;
  // Whom it runs as: an agent running as root switches to it (process: the shim drops privileges
  // before exec; docker: the container's user); other agents run it as themselves. None: as the
  // agent (a master before accounts).
  std::optional<AgentUserGroup> run_as;
  bool operator==(const WorkloadStart&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("allocation_id", s.allocation_id, kRequired);
    v("task_id", s.task_id, kRequired);
    v("entrypoint", s.entrypoint, kRequired);
    v("env", s.env);
    v("slot_ids", s.slot_ids);
    v("master_address", s.master_address);
    v("session_token", s.session_token);
    v("container", s.container);
    v("run_as", s.run_as);
  }
};

// Master -> agent (reliable): SIGTERM to the workload's process group, SIGKILL after the grace.
struct WorkloadKill {
  static constexpr std::string_view kType = "workload.kill";
  std::string allocation_id;
  int64_t grace_ms = 10000;
  bool operator==(const WorkloadKill&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("allocation_id", s.allocation_id, kRequired);
    v("grace_ms", s.grace_ms);
  }
};

// Agent -> master (reliable): a workload changed state.
struct WorkloadState {
  static constexpr std::string_view kType = "workload.state";
  std::string allocation_id;
  std::string task_id;
  std::string state;         // kWorkload*
  int32_t exit_code = 0;     // TERMINATED: the exit code, or 128 + signal
  std::string failure_type;  // TERMINATED: empty on success, else kFailure*
  std::string message;       // a human explanation of a failure
  bool operator==(const WorkloadState&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("allocation_id", s.allocation_id, kRequired);
    v("task_id", s.task_id);
    v("state", s.state, kRequired);
    v("exit_code", s.exit_code, kOmitDefault);
    v("failure_type", s.failure_type, kOmitDefault);
    v("message", s.message, kOmitDefault);
  }
};

struct WorkloadLogLine {
  int64_t timestamp = 0;  // Unix nanoseconds, when the agent read the line
  std::string stdtype;    // "stdout" | "stderr"
  std::string text;       // without the newline
  int64_t offset = -1;    // where the line starts in the workload's stdtype output; -1: unknown
  bool operator==(const WorkloadLogLine&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("ts", s.timestamp, kRequired);
    v("std", s.stdtype);
    v("text", s.text);
    v("off", s.offset);
  }
};

// Agent -> master (reliable): a batch of a workload's output, numbered per allocation and agent
// incarnation from 1. The agent keeps each batch until the master says it is committed
// (WorkloadLogsCommitted), and sends the kept ones again after the master restarts;
// (allocation, incarnation, batch) makes a repeat a no-op, and so does a line's offset when a
// restarted agent re-reads output it had sent before.
struct WorkloadLogs {
  static constexpr std::string_view kType = "workload.logs";
  std::string allocation_id;
  std::string task_id;
  std::string incarnation;  // the sending agent process
  uint64_t batch = 0;
  std::vector<WorkloadLogLine> lines;
  bool operator==(const WorkloadLogs&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("allocation_id", s.allocation_id, kRequired);
    v("task_id", s.task_id, kRequired);
    v("incarnation", s.incarnation);
    v("batch", s.batch, kRequired);
    v("lines", s.lines);
  }
};

// Master -> agent (best effort): the batch is in the database.
struct WorkloadLogsCommitted {
  static constexpr std::string_view kType = "workload.logs.committed";
  std::string allocation_id;
  std::string incarnation;
  uint64_t batch = 0;
  bool operator==(const WorkloadLogsCommitted&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("allocation_id", s.allocation_id, kRequired);
    v("incarnation", s.incarnation);
    v("batch", s.batch, kRequired);
  }
};

// Master -> agent (best effort): the workload's end is in the database; the agent can forget it.
// Until then the agent reports the ended workload in every registration.
struct WorkloadEndRecorded {
  static constexpr std::string_view kType = "workload.end.recorded";
  std::string allocation_id;
  bool operator==(const WorkloadEndRecorded&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("allocation_id", s.allocation_id, kRequired);
  }
};

}  // namespace det::bus
