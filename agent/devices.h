#pragma once

// Device discovery: which slots this agent offers.
//
// slot_type (Determined's names): auto = NVIDIA GPUs if any are visible, else the CPU;
// cuda = GPUs only (none found is an error); cpu = the CPU; none = no slots (the agent joins, runs
// nothing). The CPU is offered as one slot that stands for all of the host's cores, as Determined
// does. `artificial_slots: N` replaces discovery with N fake CPU slots (testing).
//
// GPUs come from `nvidia-smi --query-gpu=...` (CSV). `visible_gpus` keeps only the GPUs named by
// index or UUID, in that order.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "bus/catalog/agent.h"
#include "common/status.h"

namespace det::agent {

struct GpuInfo {
  int index = 0;
  std::string uuid;
  std::string name;
  int64_t memory_mib = 0;
  int utilization_percent = 0;  // at the time of the query
  int64_t memory_used_mib = 0;
};

// Runs a command and returns its stdout, or an error when it cannot run or exits non-zero.
using CommandRunner = std::function<Result<std::string>(const std::vector<std::string>& argv)>;
Result<std::string> RunCommand(const std::vector<std::string>& argv);

// The nvidia-smi query the agent runs, and a parser for its output
// ("index, uuid, name, memory.total, utilization.gpu, memory.used", no header, no units).
std::vector<std::string> NvidiaSmiQuery();
Result<std::vector<GpuInfo>> ParseNvidiaSmi(const std::string& csv);

// NotFound when nvidia-smi is missing; an error naming the cause when it fails.
Result<std::vector<GpuInfo>> QueryGpus(const CommandRunner& run);

struct DeviceConfig {
  std::string slot_type = "auto";  // auto | cuda | cpu | none
  int artificial_slots = 0;
  std::vector<std::string> visible_gpus;  // empty: all
};

// The slots to offer. Errors name the reason (cuda requested without GPUs, unknown visible GPU).
Result<std::vector<bus::SlotInfo>> DiscoverSlots(const DeviceConfig& config,
                                                 const CommandRunner& run);

// "Intel(R) Xeon(R) ... (16 cores)" from /proc/cpuinfo and the online core count.
std::string CpuBrand();

}  // namespace det::agent
