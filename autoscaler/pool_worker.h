#pragma once

// One pool's PoolScaler on a thread of its own, so that a slow cloud call (an EC2 or Compute
// Engine request that takes seconds, or times out after 30) delays that pool only, never the
// autoscaler's event loop or the other pools.
//
// The loop hands the worker each new view of the cluster (an immutable snapshot) and each demand
// change; the worker ticks its scaler whenever the scaler asks to run, a demand change arrives or
// the view changes. What the scaler reports is queued for the loop, which owns the bus sockets,
// and an eventfd the loop polls becomes readable so that it publishes at once.
//
// Threading: every public method is called from the loop's thread; the scaler and its provider
// are used on the worker's thread only.

#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <variant>
#include <vector>

#include "autoscaler/cluster_view.h"
#include "autoscaler/pool_scaler.h"

namespace det::autoscaler {

class PoolWorker final : private ScalingReporter {
 public:
  // A report of the scaler's: a decision, or an instance that changed (`gone`).
  struct InstanceReport {
    bus::InstanceInfo instance;
    bool gone = false;
  };
  using Report = std::variant<bus::ScalingDecisionEvent, InstanceReport>;

  // Starts the thread; the scaler is built on the caller's thread with this worker as reporter.
  PoolWorker(std::string pool, ProviderConfig config, std::unique_ptr<Provider> provider,
             const Clock& clock, std::shared_ptr<const ClusterView> view);
  ~PoolWorker();  // stops the thread (after the provider call it may be in) and joins it
  PoolWorker(const PoolWorker&) = delete;
  PoolWorker& operator=(const PoolWorker&) = delete;

  void SetView(std::shared_ptr<const ClusterView> view);
  void DemandChanged();
  // The reports queued since the last call, oldest first.
  std::vector<Report> TakeReports();
  // Readable while reports are queued (for zmq_poll); TakeReports() drains it.
  int wake_fd() const { return wake_fd_; }

 private:
  void Run();
  void Decided(const bus::ScalingDecisionEvent& decision) override;
  void InstanceChanged(const bus::InstanceInfo& instance, bool gone) override;
  void Queue(Report report);

  const Clock& clock_;
  std::unique_ptr<PoolScaler> scaler_;
  int wake_fd_ = -1;
  std::mutex mu_;
  std::condition_variable changed_;
  std::shared_ptr<const ClusterView> view_;
  bool view_changed_ = false;
  bool demand_changed_ = false;
  bool stopping_ = false;
  std::vector<Report> reports_;
  std::thread thread_;
};

}  // namespace det::autoscaler
