#include "autoscaler/pool_worker.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>

namespace det::autoscaler {
namespace {

// The longest the worker sleeps without a reason (its scaler usually asks for less).
constexpr Duration kMaxSleep = std::chrono::seconds(1);

}  // namespace

PoolWorker::PoolWorker(std::string pool, ProviderConfig config, std::unique_ptr<Provider> provider,
                       const Clock& clock, std::shared_ptr<const ClusterView> view)
    : clock_(clock),
      scaler_(std::make_unique<PoolScaler>(std::move(pool), std::move(config), std::move(provider),
                                           clock, static_cast<ScalingReporter&>(*this))),
      wake_fd_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)),
      view_(std::move(view)) {
  thread_ = std::thread([this] { Run(); });
}

PoolWorker::~PoolWorker() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  changed_.notify_one();
  thread_.join();
  if (wake_fd_ >= 0) close(wake_fd_);
}

void PoolWorker::SetView(std::shared_ptr<const ClusterView> view) {
  {
    std::lock_guard lock(mu_);
    view_ = std::move(view);
    view_changed_ = true;
  }
  changed_.notify_one();
}

void PoolWorker::DemandChanged() {
  {
    std::lock_guard lock(mu_);
    demand_changed_ = true;
  }
  changed_.notify_one();
}

std::vector<PoolWorker::Report> PoolWorker::TakeReports() {
  uint64_t count = 0;
  [[maybe_unused]] ssize_t drained = read(wake_fd_, &count, sizeof(count));
  std::lock_guard lock(mu_);
  std::vector<Report> taken;
  taken.swap(reports_);
  return taken;
}

void PoolWorker::Run() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    const std::shared_ptr<const ClusterView> view = view_;
    const bool demand = demand_changed_;
    view_changed_ = demand_changed_ = false;
    lock.unlock();
    if (demand) scaler_->DemandChanged();
    const MonoTime next = scaler_->Tick(*view);
    lock.lock();
    // MonoTime is the clock's; the wait is on the steady clock, for as long as the scaler asked.
    const Duration sleep = std::clamp<Duration>(next - clock_.Now(), Duration::zero(), kMaxSleep);
    changed_.wait_for(lock, sleep, [&] { return stopping_ || demand_changed_ || view_changed_; });
  }
}

void PoolWorker::Decided(const bus::ScalingDecisionEvent& decision) { Queue(decision); }

void PoolWorker::InstanceChanged(const bus::InstanceInfo& instance, bool gone) {
  Queue(InstanceReport{instance, gone});
}

void PoolWorker::Queue(Report report) {
  {
    std::lock_guard lock(mu_);
    reports_.push_back(std::move(report));
  }
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t written = write(wake_fd_, &one, sizeof(one));
}

}  // namespace det::autoscaler
