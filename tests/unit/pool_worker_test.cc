// PoolWorker: a pool's scaler on its own thread. Its reports come back through a queue whose
// eventfd wakes the loop, a demand change wakes it within the batch window, and a cloud call
// that hangs in one pool delays no other pool.
#include "autoscaler/pool_worker.h"

#include <gtest/gtest.h>
#include <poll.h>

#include <atomic>
#include <thread>

#include "tests/testing/test_util.h"

namespace det::autoscaler {
namespace {

using namespace std::chrono_literals;

// Launches instantly, or blocks in Launch() while `hang` is set (a cloud call that times out).
class SlowCloud final : public Provider {
 public:
  Result<std::vector<Instance>> List(const std::string& pool) override {
    std::lock_guard lock(mu);
    return instances;
  }
  LaunchResult Launch(const LaunchRequest& request) override {
    while (hang.load()) std::this_thread::sleep_for(5ms);
    std::lock_guard lock(mu);
    LaunchResult result;
    for (int i = 0; i < request.count; ++i) {
      instances.push_back({request.resource_pool + "-" + std::to_string(instances.size()),
                           request.resource_pool, InstanceState::kStarting, request.offering,
                           RealClock::Instance().WallNow()});
      result.launched.push_back(instances.back());
    }
    launches.fetch_add(1);
    return result;
  }
  Status Terminate(const std::vector<std::string>&) override { return Status::Ok(); }
  std::vector<Offering> Offerings() const override { return {{"t", "z", false}}; }

  std::atomic<bool> hang{false};
  std::atomic<int> launches{0};
  std::mutex mu;
  std::vector<Instance> instances;
};

bus::EventSubscriber::Update Pending(const std::string& pool, int slots) {
  const bus::ClusterPending pending{pool, slots, 0, 1, slots};
  bus::BusEvent event{std::string(bus::ClusterPending::kType), {}, bus::Encode(pending)};
  return {bus::EventSubscriber::Update::Kind::kEvent, event};
}

ProviderConfig Config() {
  ProviderConfig config;
  config.type = "local";
  config.slots_per_instance = 1;
  config.max_instances = 4;
  return config;
}

bool Readable(int fd, std::chrono::milliseconds timeout) {
  pollfd item{fd, POLLIN, 0};
  return poll(&item, 1, static_cast<int>(timeout.count())) == 1;
}

TEST(PoolWorkerTest, ADemandChangeLaunchesAndTheReportWakesTheLoop) {
  auto cloud = std::make_unique<SlowCloud>();
  SlowCloud* raw = cloud.get();
  ClusterView view;
  PoolWorker worker("a", Config(), std::move(cloud), RealClock::Instance(),
                    std::make_shared<const ClusterView>(view));
  view.Apply(Pending("a", 2));
  worker.SetView(std::make_shared<const ClusterView>(view));
  worker.DemandChanged();
  ASSERT_TRUE(Readable(worker.wake_fd(), 2000ms)) << "the decision wakes the loop";
  std::vector<PoolWorker::Report> reports;
  ASSERT_TRUE(testing::Eventually(
      [&] {
        for (auto& report : worker.TakeReports()) reports.push_back(std::move(report));
        for (const auto& report : reports) {
          if (std::holds_alternative<bus::ScalingDecisionEvent>(report)) return true;
        }
        return false;
      },
      2000ms));
  const auto& decision = std::get<bus::ScalingDecisionEvent>(reports.front());
  EXPECT_EQ(decision.launched.size(), 2u);
  EXPECT_EQ(raw->launches.load(), 1);
  EXPECT_FALSE(Readable(worker.wake_fd(), 0ms)) << "drained";
}

TEST(PoolWorkerTest, ACloudCallThatHangsInOnePoolDelaysNoOther) {
  auto slow = std::make_unique<SlowCloud>();
  auto fast = std::make_unique<SlowCloud>();
  SlowCloud* slow_raw = slow.get();
  SlowCloud* fast_raw = fast.get();
  ClusterView view;
  PoolWorker stuck("slow", Config(), std::move(slow), RealClock::Instance(),
                   std::make_shared<const ClusterView>(view));
  PoolWorker healthy("fast", Config(), std::move(fast), RealClock::Instance(),
                     std::make_shared<const ClusterView>(view));
  slow_raw->hang = true;
  view.Apply(Pending("slow", 1));
  view.Apply(Pending("fast", 1));
  const auto snapshot = std::make_shared<const ClusterView>(view);
  stuck.SetView(snapshot);
  healthy.SetView(snapshot);
  const auto asked = std::chrono::steady_clock::now();
  stuck.DemandChanged();
  healthy.DemandChanged();
  ASSERT_TRUE(testing::PumpUntil([] {}, [&] { return fast_raw->launches.load() == 1; }, 2000ms));
  EXPECT_LT(std::chrono::steady_clock::now() - asked, 500ms);
  EXPECT_EQ(slow_raw->launches.load(), 0) << "still inside its launch call";
  slow_raw->hang = false;  // lets the destructor join
  ASSERT_TRUE(testing::PumpUntil([] {}, [&] { return slow_raw->launches.load() == 1; }, 2000ms));
}

}  // namespace
}  // namespace det::autoscaler
