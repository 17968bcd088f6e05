// PoolWorker: a pool's scaler on its own thread. Its reports come back through a queue whose
// eventfd wakes the loop, a demand change wakes it within the batch window, and a cloud call
// that hangs in one pool delays no other pool.
#include "autoscaler/pool_worker.h"

#include <gtest/gtest.h>
#include <poll.h>

#include <atomic>
#include <thread>

#include "tests/testing/fake_provider.h"
#include "tests/testing/test_util.h"

namespace det::autoscaler {
namespace {

using namespace std::chrono_literals;

using testing::FakeProvider;

// An on-demand cloud of one offering, in memory.
std::unique_ptr<FakeProvider> Cloud() {
  auto cloud = std::make_unique<FakeProvider>(RealClock::Instance());
  cloud->offerings = {{"t", "z", false}};
  return cloud;
}

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
  auto cloud = Cloud();
  FakeProvider* raw = cloud.get();
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
  auto slow = Cloud();
  auto fast = Cloud();
  FakeProvider* slow_raw = slow.get();
  FakeProvider* fast_raw = fast.get();
  ClusterView view;
  PoolWorker stuck("slow", Config(), std::move(slow), RealClock::Instance(),
                   std::make_shared<const ClusterView>(view));
  PoolWorker healthy("fast", Config(), std::move(fast), RealClock::Instance(),
                     std::make_shared<const ClusterView>(view));
  slow_raw->Hold();
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
  slow_raw->Release();  // lets the destructor join
  ASSERT_TRUE(testing::PumpUntil([] {}, [&] { return slow_raw->launches.load() == 1; }, 2000ms));
}

}  // namespace
}  // namespace det::autoscaler
