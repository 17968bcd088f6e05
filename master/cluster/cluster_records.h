#pragma once

#include <functional>
#include <string>
#include <vector>

#include "bus/catalog/agent.h"
#include "bus/catalog/workload.h"
#include "common/status.h"
#include "master/cluster/task.h"
#include "master/records/store.h"

namespace det::master {

// What the agent registry records of the cluster, and the one thing it waits for: that what it
// recorded is stored. The seam between the registry and PostgreSQL: StoredClusterRecords
// (stored_cluster_records.h) writes through the store's thread (records/store.h); the registry's
// unit tests use an in-memory double (tests/testing/in_memory_cluster_records.h).
//
// Order is the contract: everything is stored in the order recorded, and a notice or an
// AfterStored callback comes only once everything recorded before it is stored.
//
// Threading: the registry's thread records; TakeNotices from that thread too; AfterStored's
// callback may run on any thread.
class ClusterRecords {
 public:
  using Notice = Store::Notice;
  virtual ~ClusterRecords() = default;

  // A task's state, placement or end changed (its queueing and end are durable before anyone is
  // told; the states between may be lazy: its agent reports them again).
  virtual void TaskChanged(const Task& task) = 0;
  // A task's job settings or later allocations' environment changed.
  virtual void TaskSettingsChanged(const Task& task) = 0;
  // A master started: the connections its predecessor left open are closed.
  virtual void MasterRestarted(int64_t now_ns) = 0;
  // An agent registered with these slots, in this pool.
  virtual void AgentRegistered(const std::string& agent_id, const bus::AgentRegister& info,
                               int64_t now_ns) = 0;
  // An agent's state ("connected", "lost", or why it was forgotten) and its connection history.
  virtual void AgentStateChanged(const std::string& agent_id, const std::string& state,
                                 int64_t now_ns) = 0;
  // A batch of a workload's output lines.
  virtual void Logs(const std::string& agent_id, bus::WorkloadLogs logs) = 0;
  // `notice` is listed by TakeNotices() once everything recorded before it is stored.
  virtual void NoticeWhenStored(Notice notice) = 0;
  virtual std::vector<Notice> TakeNotices() = 0;
  // `done` is called once everything recorded before is stored, or with why it was not.
  virtual void AfterStored(std::function<void(const Status&)> done) = 0;
};

}  // namespace det::master
