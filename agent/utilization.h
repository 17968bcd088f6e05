#pragma once

#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "agent/devices.h"
#include "bus/catalog/agent.h"
#include "common/clock.h"

namespace det::agent {

// The host's CPU busy share between two readings of /proc/stat, in percent.
class CpuLoad {
 public:
  // 0 on the first call; after that, the share since the previous call.
  int Sample();

 private:
  uint64_t busy_ = 0, total_ = 0;
};

// Samples how busy each slot is, every `interval`, on a thread of its own (nvidia-smi can take a
// while): GPUs from nvidia-smi (utilization.gpu, memory.used), CPU slots from /proc/stat.
//
// Threading: Take() may be called from any thread.
class UtilizationSampler {
 public:
  UtilizationSampler(std::vector<bus::SlotInfo> slots, Duration interval, CommandRunner run,
                     const Clock& clock);
  ~UtilizationSampler();

  // The newest sample not yet taken.
  std::optional<bus::AgentUtilization> Take();

 private:
  bus::AgentUtilization SampleNow();

  std::vector<bus::SlotInfo> slots_;
  Duration interval_;
  CommandRunner run_;
  const Clock& clock_;
  CpuLoad cpu_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::optional<bus::AgentUtilization> latest_;
  std::thread thread_;
};

}  // namespace det::agent
