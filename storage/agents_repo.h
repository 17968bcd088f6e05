#pragma once

// The cluster's identity, resource pools, agents and each agent's connection history.
//
// Functions take the caller's transaction (Database::Run). Times are Unix nanoseconds.

#include <cstdint>
#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "common/status.h"

namespace det::storage {

// The id stored at the first start; later calls return it and ignore `candidate`.
std::string EnsureClusterId(pqxx::work& tx, const std::string& candidate);
// The key that signs allocation tokens: stored at the first call (after EnsureClusterId); later
// calls return it and ignore `candidate`.
std::string EnsureTokenSecret(pqxx::work& tx, const std::string& candidate);

struct ResourcePoolRecord {
  std::string name;
  std::string description;
  std::string config_json = "{}";
};
void UpsertResourcePool(pqxx::work& tx, const ResourcePoolRecord& pool);
std::vector<ResourcePoolRecord> ListResourcePools(pqxx::work& tx);

struct AgentRecord {
  std::string id;
  std::string resource_pool;
  std::string hostname;
  std::string version;
  std::string slots_json = "[]";  // the agent's devices, as it reported them
  std::string state;
  int64_t first_seen_ns = 0;  // set by the first upsert, kept after
  int64_t last_seen_ns = 0;
};

// Inserts the agent or updates everything but first_seen; `now_ns` is last_seen (and first_seen
// of a new agent).
void UpsertAgent(pqxx::work& tx, const AgentRecord& agent, int64_t now_ns);
Status SetAgentState(pqxx::work& tx, const std::string& agent_id, const std::string& state,
                     int64_t now_ns);                                        // NotFound
Result<AgentRecord> FindAgent(pqxx::work& tx, const std::string& agent_id);  // NotFound
std::vector<AgentRecord> ListAgents(pqxx::work& tx);

struct AgentConnectionRecord {
  int64_t id = 0;
  std::string agent_id;
  int64_t connected_at_ns = 0;
  std::optional<int64_t> disconnected_at_ns;
  std::string reason;  // why it ended
};

int64_t OpenAgentConnection(pqxx::work& tx, const std::string& agent_id, int64_t at_ns);
Status CloseAgentConnection(pqxx::work& tx, int64_t connection_id, int64_t at_ns,
                            const std::string& reason);  // NotFound when unknown or closed
// Closes every open connection (a master that starts closes its predecessor's); returns how many.
int64_t CloseOpenAgentConnections(pqxx::work& tx, int64_t at_ns, const std::string& reason);
// Closes the agent's open connections; returns how many.
int64_t CloseAgentConnectionsOf(pqxx::work& tx, const std::string& agent_id, int64_t at_ns,
                                const std::string& reason);
// Newest first.
std::vector<AgentConnectionRecord> AgentConnectionHistory(pqxx::work& tx,
                                                          const std::string& agent_id, int limit);

}  // namespace det::storage
