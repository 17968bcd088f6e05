#include "agent/utilization.h"

#include <fstream>
#include <map>
#include <sstream>

namespace det::agent {

int CpuLoad::Sample() {
  std::ifstream in("/proc/stat");
  std::string cpu;
  uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  in >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal;
  const uint64_t total = user + nice + system + idle + iowait + irq + softirq + steal;
  const uint64_t busy = total - idle - iowait;
  int percent = 0;
  if (total_ > 0 && total > total_) {
    percent = static_cast<int>(100 * (busy - busy_) / (total - total_));
  }
  busy_ = busy;
  total_ = total;
  return percent;
}

UtilizationSampler::UtilizationSampler(std::vector<bus::SlotInfo> slots, Duration interval,
                                       CommandRunner run, const Clock& clock)
    : slots_(std::move(slots)), interval_(interval), run_(std::move(run)), clock_(clock) {
  cpu_.Sample();
  thread_ = std::thread([this] {
    std::unique_lock lock(mu_);
    while (!wake_.wait_for(lock, interval_, [this] { return stop_; })) {
      lock.unlock();
      bus::AgentUtilization sample = SampleNow();
      lock.lock();
      latest_ = std::move(sample);
    }
  });
}

UtilizationSampler::~UtilizationSampler() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

std::optional<bus::AgentUtilization> UtilizationSampler::Take() {
  std::lock_guard lock(mu_);
  return std::exchange(latest_, std::nullopt);
}

bus::AgentUtilization UtilizationSampler::SampleNow() {
  bus::AgentUtilization sample;
  sample.sampled_at = UnixNanos(clock_.WallNow());
  std::map<std::string, GpuInfo> gpus;
  bool any_gpu = false;
  for (const auto& slot : slots_) any_gpu |= slot.type == "cuda";
  if (any_gpu) {
    if (auto found = QueryGpus(run_); found.ok()) {
      for (const GpuInfo& gpu : *found) gpus[std::to_string(gpu.index)] = gpu;
    }
  }
  const int cpu = cpu_.Sample();
  for (const auto& slot : slots_) {
    if (auto gpu = gpus.find(slot.id); slot.type == "cuda" && gpu != gpus.end()) {
      sample.slots.push_back(
          {slot.id, gpu->second.utilization_percent, gpu->second.memory_used_mib});
    } else {
      sample.slots.push_back({slot.id, cpu, 0});
    }
  }
  return sample;
}

}  // namespace det::agent
