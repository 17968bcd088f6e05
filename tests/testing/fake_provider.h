#pragma once

// The scriptable fake of the autoscaler's provider contract (provider/provider.h), for the pool
// scaler's and pool worker's tests: a cloud in memory, whose instances are whatever was launched
// and not terminated. Every call is counted; the next launch can be made to fail, and launches
// can be held (a cloud call that hangs) until released. Thread-safe: a pool worker calls it from
// its own thread while the test reads and scripts it.

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "provider/provider.h"

namespace det::testing {

class FakeProvider : public provider::Provider {
 public:
  using Instance = provider::Instance;
  using LaunchRequest = provider::LaunchRequest;
  using LaunchResult = provider::LaunchResult;
  using Offering = provider::Offering;
  using ProviderError = provider::ProviderError;

  // Instances are stamped with `clock`'s wall time.
  explicit FakeProvider(const Clock& clock) : clock_(clock) {}

  Result<std::vector<Instance>> List(const std::string& pool) override {
    std::lock_guard lock(mu_);
    ++lists;
    std::vector<Instance> out;
    for (const Instance& i : *cloud) {
      if (i.resource_pool == pool) out.push_back(i);
    }
    return out;
  }
  LaunchResult Launch(const LaunchRequest& request) override {
    std::unique_lock lock(mu_);
    released_.wait(lock, [this] { return !held_; });
    launch_calls.push_back(request);
    LaunchResult result;
    if (fail_next) {
      result.error = *fail_next;
      fail_next.reset();
    } else {
      for (int i = 0; i < request.count; ++i) {
        Instance instance{"i-" + std::to_string(++(*launched_ever)), request.resource_pool,
                          provider::InstanceState::kStarting, request.offering, clock_.WallNow()};
        cloud->push_back(instance);
        result.launched.push_back(instance);
      }
    }
    launches.fetch_add(1);
    return result;
  }
  Status Terminate(const std::vector<std::string>& ids) override {
    std::lock_guard lock(mu_);
    terminated.insert(terminated.end(), ids.begin(), ids.end());
    std::erase_if(*cloud, [&](const Instance& i) {
      return std::find(ids.begin(), ids.end(), i.id) != ids.end();
    });
    return Status::Ok();
  }
  std::vector<Offering> Offerings() const override { return offerings; }

  // While held, Launch() waits (a cloud call that does not return) until Release().
  void Hold() {
    std::lock_guard lock(mu_);
    held_ = true;
  }
  void Release() {
    {
      std::lock_guard lock(mu_);
      held_ = false;
    }
    released_.notify_all();
  }

  // Scripted and recorded; read them while no call runs, except `launches`.
  std::shared_ptr<std::vector<Instance>> cloud = std::make_shared<std::vector<Instance>>();
  std::shared_ptr<int> launched_ever = std::make_shared<int>(0);
  std::vector<Offering> offerings = {{"g4dn.xlarge", "a", true}, {"g4dn.xlarge", "a", false}};
  std::vector<LaunchRequest> launch_calls;
  std::vector<std::string> terminated;
  std::optional<ProviderError> fail_next;
  int lists = 0;
  std::atomic<int> launches{0};  // Launch() calls that returned

 private:
  const Clock& clock_;
  std::mutex mu_;
  std::condition_variable released_;
  bool held_ = false;
};

}  // namespace det::testing
