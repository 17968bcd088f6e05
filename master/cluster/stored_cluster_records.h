#pragma once

#include "master/cluster/cluster_records.h"
#include "master/records/store.h"

namespace det::master {

// The registry's records in PostgreSQL, written on the store's thread (records/store.h): task
// changes as batched statements (task_persistence.h: durable or lazy, superseding), agents and
// their connection history as ops, logs through the store's ingest writer.
class StoredClusterRecords final : public ClusterRecords {
 public:
  // `store` outlives the records.
  explicit StoredClusterRecords(Store& store) : store_(store) {}

  void TaskChanged(const Task& task) override;
  void TaskSettingsChanged(const Task& task) override;
  void MasterRestarted(int64_t now_ns) override;
  void AgentRegistered(const std::string& agent_id, const bus::AgentRegister& info,
                       int64_t now_ns) override;
  void AgentStateChanged(const std::string& agent_id, const std::string& state,
                         int64_t now_ns) override;
  void Logs(const std::string& agent_id, bus::WorkloadLogs logs) override;
  void NoticeWhenStored(Notice notice) override { store_.EnqueueNotice(std::move(notice)); }
  std::vector<Notice> TakeNotices() override { return store_.TakeNotices(); }
  void AfterStored(std::function<void(const Status&)> done) override {
    store_.AfterCommit(std::move(done));
  }

 private:
  Store& store_;
};

}  // namespace det::master
