#include "agent/workload_record.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>
#include <sstream>

#include "agent/shim/workload_shim.h"
#include "agent/workload_folders.h"
#include "common/files.h"
#include "common/process.h"

namespace det::agent {

Status WriteWorkloadRecord(const std::string& dir, const WorkloadRecord& record) {
  nlohmann::json state = {
      {"allocation_id", record.allocation_id},
      {"task_id", record.task_id},
      {"pid", record.pid},
      {"kill_requested", record.kill_requested},
      {"offsets", {{"stdout", record.stdout_offset}, {"stderr", record.stderr_offset}}}};
  return WriteFileInPlace(dir + "/" + kStateFile, state.dump());
}

std::optional<WorkloadRecord> ReadWorkloadRecord(const std::string& dir) {
  auto state =
      nlohmann::json::parse(ReadFileText(dir + "/" + kStateFile).value_or(""), nullptr, false);
  if (!state.is_object()) return std::nullopt;
  WorkloadRecord record;
  try {
    record.allocation_id = state.value("allocation_id", "");
    record.task_id = state.value("task_id", "");
    record.pid = state.value("pid", -1);
    record.kill_requested = state.value("kill_requested", false);
    const auto offsets = state.value("offsets", nlohmann::json::object());
    record.stdout_offset = std::max<int64_t>(0, offsets.value("stdout", int64_t{0}));
    record.stderr_offset = std::max<int64_t>(0, offsets.value("stderr", int64_t{0}));
  } catch (const nlohmann::json::exception& e) {
    spdlog::warn("{}: unreadable {}: {}", dir, kStateFile, e.what());
    record.pid = -1;
  }
  return record;
}

bus::WorkloadState WorkloadEnding(const std::string& exit_status, const std::string& container_end,
                                  bool kill_requested) {
  bus::WorkloadState state;
  state.state = bus::kWorkloadTerminated;
  std::istringstream in(container_end.empty() ? exit_status : container_end);
  std::string kind;
  int number = -1;
  in >> kind;
  if (kind == "start-failed" || kind == "lost") {
    state.exit_code = -1;
    state.failure_type = kind == "lost" ? bus::kFailureTaskError : bus::kFailureStartFailed;
    std::getline(in, state.message);
    state.message = (kind == "lost" ? "lost:" : "cannot start:") + state.message;
    return state;
  }
  in >> number;
  if (kind == "oom" && number >= 0) {
    state.exit_code = number;
    state.failure_type = kill_requested ? bus::kFailureKilled : bus::kFailureTaskError;
    state.message = "killed for lack of memory (out of memory in its container)";
    return state;
  }
  if (kind == "exit" && number >= 0) {
    state.exit_code = number;
    if (number != 0) state.message = "exited with code " + std::to_string(number);
  } else if (kind == "signal" && number > 0) {
    state.exit_code = 128 + number;
    state.message = std::string("killed by signal ") + strsignal(number);
  } else {
    state.exit_code = -1;
    state.message = "exit status unknown (the workload's supervisor was killed)";
  }
  if (state.exit_code != 0) {
    state.failure_type = kill_requested ? bus::kFailureKilled : bus::kFailureTaskError;
  }
  return state;
}

bool IsShimOf(pid_t pid, const std::string& dir) {
  // Not by its command line: a shim the shim server cloned has the server's (shim_server.h).
  return LeadsGroupIn(pid, kWorkloadShimProgram, dir);
}

bool IsZombie(pid_t pid) {
  const std::string stat = ReadFileText("/proc/" + std::to_string(pid) + "/stat").value_or("");
  const size_t paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] == 'Z';
}

std::string FileText(const std::string& dir, const char* name) {
  std::string text = ReadFileText(dir + "/" + name).value_or("");
  text.erase(text.find_last_not_of(" \t\r\n") + 1);
  return text;
}

}  // namespace det::agent
