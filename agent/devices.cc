#include "agent/devices.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

extern char** environ;

namespace det::agent {
namespace {

std::string Trim(std::string s) {
  const auto not_space = [](unsigned char c) { return !std::isspace(c); };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
  s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
  return s;
}

std::vector<std::string> SplitCsvLine(const std::string& line) {
  std::vector<std::string> fields;
  std::stringstream in(line);
  std::string field;
  while (std::getline(in, field, ',')) fields.push_back(Trim(field));
  return fields;
}

Result<int64_t> ParseNumber(const std::string& text, const std::string& what, int line) {
  try {
    size_t used = 0;
    const int64_t value = std::stoll(text, &used);
    if (used == text.size()) return value;
  } catch (const std::exception&) {
  }
  return InvalidArgument("nvidia-smi line " + std::to_string(line) + ": " + what + " \"" + text +
                         "\" is not a number");
}

// "[N/A]" and "N/A" (e.g. utilisation on some boards) read as 0.
int64_t NumberOrZero(const std::string& text) {
  try {
    return std::stoll(text);
  } catch (const std::exception&) {
    return 0;
  }
}

std::vector<bus::SlotInfo> CpuSlots(int count) {
  std::vector<bus::SlotInfo> slots;
  for (int i = 0; i < count; ++i) slots.push_back({"cpu" + std::to_string(i), "cpu", CpuBrand()});
  return slots;
}

Result<std::vector<GpuInfo>> KeepVisible(const std::vector<GpuInfo>& gpus,
                                         const std::vector<std::string>& visible) {
  if (visible.empty()) return gpus;
  std::vector<GpuInfo> kept;
  for (const std::string& wanted : visible) {
    auto it = std::find_if(gpus.begin(), gpus.end(), [&](const GpuInfo& g) {
      return std::to_string(g.index) == wanted || g.uuid == wanted;
    });
    if (it == gpus.end()) {
      return InvalidArgument("visible_gpus: no GPU with index or UUID \"" + wanted + "\" (found " +
                             std::to_string(gpus.size()) + ")");
    }
    kept.push_back(*it);
  }
  return kept;
}

}  // namespace

Result<std::string> RunCommand(const std::vector<std::string>& argv) {
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) return Internal(std::string("pipe: ") + std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_addclose(&actions, out[0]);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  if (spawned != 0) {
    close(out[0]);
    return NotFound("cannot run " + argv[0] + ": " + std::strerror(spawned));
  }
  std::string output;
  char buf[4096];
  ssize_t n;
  while ((n = read(out[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR)) {
    if (n > 0) output.append(buf, static_cast<size_t>(n));
  }
  close(out[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
    return NotFound("cannot run " + argv[0] + ": not found");
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return Unavailable(argv[0] + " failed (status " + std::to_string(status) + ")");
  }
  return output;
}

std::vector<std::string> NvidiaSmiQuery() {
  return {"nvidia-smi", "--query-gpu=index,uuid,name,memory.total,utilization.gpu,memory.used",
          "--format=csv,noheader,nounits"};
}

Result<std::vector<GpuInfo>> ParseNvidiaSmi(const std::string& csv) {
  std::vector<GpuInfo> gpus;
  std::stringstream in(csv);
  std::string line;
  int line_number = 0;
  while (std::getline(in, line)) {
    ++line_number;
    if (Trim(line).empty()) continue;
    auto fields = SplitCsvLine(line);
    if (fields.size() != 6) {
      return InvalidArgument("nvidia-smi line " + std::to_string(line_number) +
                             ": expected 6 fields (index, uuid, name, memory.total, "
                             "utilization.gpu, memory.used), got " +
                             std::to_string(fields.size()) + ": \"" + line + "\"");
    }
    DET_ASSIGN_OR_RETURN(int64_t index, ParseNumber(fields[0], "index", line_number));
    DET_ASSIGN_OR_RETURN(int64_t memory, ParseNumber(fields[3], "memory.total", line_number));
    if (fields[1].empty()) {
      return InvalidArgument("nvidia-smi line " + std::to_string(line_number) + ": empty uuid");
    }
    gpus.push_back({static_cast<int>(index), fields[1], fields[2], memory,
                    static_cast<int>(NumberOrZero(fields[4])), NumberOrZero(fields[5])});
  }
  return gpus;
}

Result<std::vector<GpuInfo>> QueryGpus(const CommandRunner& run) {
  DET_ASSIGN_OR_RETURN(std::string csv, run(NvidiaSmiQuery()));
  return ParseNvidiaSmi(csv);
}

Result<std::vector<bus::SlotInfo>> DiscoverSlots(const DeviceConfig& config,
                                                 const CommandRunner& run) {
  if (config.artificial_slots > 0) return CpuSlots(config.artificial_slots);
  if (config.slot_type == "none") return std::vector<bus::SlotInfo>{};
  if (config.slot_type == "cpu") return CpuSlots(1);
  auto gpus = QueryGpus(run);
  if (!gpus.ok() && gpus.status().code() != StatusCode::kNotFound) return gpus.status();
  std::vector<GpuInfo> found = gpus.ok() ? *gpus : std::vector<GpuInfo>{};
  DET_ASSIGN_OR_RETURN(found, KeepVisible(found, config.visible_gpus));
  if (found.empty()) {
    if (config.slot_type == "cuda") {
      return FailedPrecondition(
          "slot_type is cuda but no NVIDIA GPU was found" +
          (gpus.ok() ? std::string(" (nvidia-smi lists none)") : ": " + gpus.status().message()));
    }
    return CpuSlots(1);
  }
  std::vector<bus::SlotInfo> slots;
  for (const GpuInfo& gpu : found) {
    slots.push_back({std::to_string(gpu.index), "cuda", gpu.name, gpu.uuid, gpu.memory_mib});
  }
  return slots;
}

std::string CpuBrand() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, model = "CPU";
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      if (auto colon = line.find(':'); colon != std::string::npos)
        model = Trim(line.substr(colon + 1));
      break;
    }
  }
  return model + " (" + std::to_string(std::thread::hardware_concurrency()) + " cores)";
}

}  // namespace det::agent
