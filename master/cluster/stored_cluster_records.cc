#include "master/cluster/stored_cluster_records.h"

#include <nlohmann/json.hpp>

#include "master/cluster/task_persistence.h"
#include "storage/agents_repo.h"

namespace det::master {
namespace {

std::string SlotsJson(const std::vector<bus::SlotInfo>& slots) {
  nlohmann::json all = nlohmann::json::array();
  for (const auto& slot : slots) {
    all.push_back({{"id", slot.id},
                   {"type", slot.type},
                   {"brand", slot.brand},
                   {"uuid", slot.uuid},
                   {"memory_mib", slot.memory_mib}});
  }
  return all.dump();
}

}  // namespace

void StoredClusterRecords::TaskChanged(const Task& task) {
  store_.EnqueueStatement(PersistTaskChange(task), TaskChangeCommit(task),
                          TaskChangeSupersedes(task));
}

void StoredClusterRecords::TaskSettingsChanged(const Task& task) {
  store_.Enqueue(PersistTaskSettings(task));
}

void StoredClusterRecords::MasterRestarted(int64_t now_ns) {
  store_.Enqueue([now_ns](pqxx::work& tx) {
    storage::CloseOpenAgentConnections(tx, now_ns, "master restarted");
  });
}

void StoredClusterRecords::AgentRegistered(const std::string& agent_id,
                                           const bus::AgentRegister& info, int64_t now_ns) {
  store_.Enqueue([agent_id, info, now_ns](pqxx::work& tx) {
    storage::UpsertAgent(tx,
                         {agent_id, info.resource_pool, info.hostname, info.version,
                          SlotsJson(info.slots), "connected"},
                         now_ns);
  });
}

void StoredClusterRecords::AgentStateChanged(const std::string& agent_id, const std::string& state,
                                             int64_t now_ns) {
  store_.Enqueue([agent_id, state, now_ns](pqxx::work& tx) {
    (void)storage::SetAgentState(tx, agent_id, state, now_ns);
    storage::CloseAgentConnectionsOf(tx, agent_id, now_ns,
                                     state == "connected" ? "reconnected" : state);
    if (state == "connected") storage::OpenAgentConnection(tx, agent_id, now_ns);
  });
}

void StoredClusterRecords::Logs(const std::string& agent_id, bus::WorkloadLogs logs) {
  store_.EnqueueLogs(agent_id, std::move(logs));
}

}  // namespace det::master
