#pragma once

// The agent registry's records in memory (master/cluster/cluster_records.h), for its unit tests:
// what was recorded, by kind, in order; and "stored" only when the test says so (Store()), so a
// test sees which answers wait for the records. Thread-safe: the registry records on its thread
// while the test reads and stores.

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "master/cluster/cluster_records.h"

namespace det::testing {

class InMemoryClusterRecords final : public master::ClusterRecords {
 public:
  // What the test may read (copies, under the lock).
  struct Snapshot {
    std::map<std::string, std::vector<std::string>> task_states;   // by allocation id, in order
    std::map<std::string, master::Task> tasks;                     // by task id: the last change
    std::map<std::string, std::vector<std::string>> agent_states;  // by agent id, in order
    int log_batches = 0;
    int restarts = 0;
  };

  void TaskChanged(const master::Task& task) override {
    std::lock_guard lock(mu_);
    if (!task.allocation_id.empty()) {
      auto& states = recorded_.task_states[task.allocation_id];
      if (states.empty() || states.back() != task.state) states.push_back(task.state);
    }
    recorded_.tasks.insert_or_assign(task.id, task);
  }
  void TaskSettingsChanged(const master::Task& task) override {
    std::lock_guard lock(mu_);
    recorded_.tasks.insert_or_assign(task.id, task);
  }
  void MasterRestarted(int64_t) override {
    std::lock_guard lock(mu_);
    ++recorded_.restarts;
  }
  void AgentRegistered(const std::string& agent_id, const bus::AgentRegister&, int64_t) override {
    std::lock_guard lock(mu_);
    recorded_.agent_states[agent_id].push_back("registered");
  }
  void AgentStateChanged(const std::string& agent_id, const std::string& state, int64_t) override {
    std::lock_guard lock(mu_);
    recorded_.agent_states[agent_id].push_back(state);
  }
  void Logs(const std::string&, bus::WorkloadLogs) override {
    std::lock_guard lock(mu_);
    ++recorded_.log_batches;
  }
  void NoticeWhenStored(Notice notice) override {
    std::lock_guard lock(mu_);
    (auto_store_ ? stored_notices_ : waiting_notices_).push_back(std::move(notice));
  }
  std::vector<Notice> TakeNotices() override {
    std::lock_guard lock(mu_);
    return std::exchange(stored_notices_, {});
  }
  void AfterStored(std::function<void(const Status&)> done) override {
    {
      std::lock_guard lock(mu_);
      if (!auto_store_) {
        waiting_callbacks_.push_back(std::move(done));
        return;
      }
    }
    done(Status::Ok());
  }

  // Holds what is recorded unstored (AfterStored callbacks and notices wait) until Store().
  void HoldStoring() {
    std::lock_guard lock(mu_);
    auto_store_ = false;
  }
  // Everything recorded so far is stored: waiting callbacks are called, notices listed; and
  // from now on at once.
  void Store() {
    std::vector<std::function<void(const Status&)>> callbacks;
    {
      std::lock_guard lock(mu_);
      auto_store_ = true;
      callbacks = std::exchange(waiting_callbacks_, {});
      for (Notice& notice : waiting_notices_) stored_notices_.push_back(std::move(notice));
      waiting_notices_.clear();
    }
    for (auto& done : callbacks) done(Status::Ok());
  }
  Snapshot Read() const {
    std::lock_guard lock(mu_);
    return recorded_;
  }
  size_t waiting_callbacks() const {
    std::lock_guard lock(mu_);
    return waiting_callbacks_.size();
  }

 private:
  mutable std::mutex mu_;
  Snapshot recorded_;
  bool auto_store_ = true;
  std::vector<std::function<void(const Status&)>> waiting_callbacks_;
  std::vector<Notice> waiting_notices_, stored_notices_;
};

}  // namespace det::testing
