#include "storage/agents_repo.h"

#include "storage/sql_support.h"

namespace det::storage {
namespace {

constexpr const char* kAgentSelect =
    "SELECT id, resource_pool, hostname, version, slots::text, state, det_ns(first_seen),"
    " det_ns(last_seen) FROM agents";

AgentRecord ReadAgent(const pqxx::row& row) {
  return {row[0].as<std::string>(), row[1].as<std::string>(), row[2].as<std::string>(),
          row[3].as<std::string>(), row[4].as<std::string>(), row[5].as<std::string>(),
          row[6].as<int64_t>(),     row[7].as<int64_t>()};
}

}  // namespace

std::string EnsureClusterId(pqxx::work& tx, const std::string& candidate) {
  tx.exec_params(
      "INSERT INTO cluster_info (id) SELECT $1 WHERE NOT EXISTS (SELECT FROM cluster_info)",
      candidate);
  return tx.exec1("SELECT id FROM cluster_info ORDER BY created_at LIMIT 1")[0].as<std::string>();
}

std::string EnsureTokenSecret(pqxx::work& tx, const std::string& candidate) {
  tx.exec_params("UPDATE cluster_info SET token_secret = $1 WHERE token_secret IS NULL", candidate);
  return tx.exec1("SELECT token_secret FROM cluster_info ORDER BY created_at LIMIT 1")[0]
      .as<std::string>();
}

void UpsertResourcePool(pqxx::work& tx, const ResourcePoolRecord& pool) {
  tx.exec_params(
      "INSERT INTO resource_pools (name, description, config) VALUES ($1, $2, $3::jsonb)"
      " ON CONFLICT (name) DO UPDATE SET description = EXCLUDED.description,"
      " config = EXCLUDED.config",
      pool.name, pool.description, pool.config_json);
}

std::vector<ResourcePoolRecord> ListResourcePools(pqxx::work& tx) {
  std::vector<ResourcePoolRecord> pools;
  for (const auto& row :
       tx.exec("SELECT name, description, config::text FROM resource_pools ORDER BY name")) {
    pools.push_back({row[0].as<std::string>(), row[1].as<std::string>(), row[2].as<std::string>()});
  }
  return pools;
}

void UpsertAgent(pqxx::work& tx, const AgentRecord& agent, int64_t now_ns) {
  tx.exec_params(
      "INSERT INTO agents (id, resource_pool, hostname, version, slots, state, first_seen,"
      " last_seen) VALUES ($1, $2, $3, $4, $5::jsonb, $6, det_ts($7), det_ts($7))"
      " ON CONFLICT (id) DO UPDATE SET resource_pool = EXCLUDED.resource_pool,"
      " hostname = EXCLUDED.hostname, version = EXCLUDED.version, slots = EXCLUDED.slots,"
      " state = EXCLUDED.state, last_seen = EXCLUDED.last_seen",
      agent.id, agent.resource_pool, agent.hostname, agent.version, agent.slots_json, agent.state,
      now_ns);
}

Status SetAgentState(pqxx::work& tx, const std::string& agent_id, const std::string& state,
                     int64_t now_ns) {
  auto result = tx.exec_params("UPDATE agents SET state = $2, last_seen = det_ts($3) WHERE id = $1",
                               agent_id, state, now_ns);
  return ExpectUpdated(result, "agent \"" + agent_id + "\"");
}

Result<AgentRecord> FindAgent(pqxx::work& tx, const std::string& agent_id) {
  auto result = tx.exec_params(std::string(kAgentSelect) + " WHERE id = $1", agent_id);
  if (result.empty()) return NotFound("agent \"" + agent_id + "\" not found");
  return ReadAgent(result[0]);
}

std::vector<AgentRecord> ListAgents(pqxx::work& tx) {
  std::vector<AgentRecord> agents;
  for (const auto& row : tx.exec(std::string(kAgentSelect) + " ORDER BY id")) {
    agents.push_back(ReadAgent(row));
  }
  return agents;
}

int64_t OpenAgentConnection(pqxx::work& tx, const std::string& agent_id, int64_t at_ns) {
  return tx
      .exec_params1(
          "INSERT INTO agent_connections (agent_id, connected_at) VALUES ($1, det_ts($2))"
          " RETURNING id",
          agent_id, at_ns)[0]
      .as<int64_t>();
}

Status CloseAgentConnection(pqxx::work& tx, int64_t connection_id, int64_t at_ns,
                            const std::string& reason) {
  auto result = tx.exec_params(
      "UPDATE agent_connections SET disconnected_at = det_ts($2), reason = $3"
      " WHERE id = $1 AND disconnected_at IS NULL",
      connection_id, at_ns, reason);
  return ExpectUpdated(result, "open agent connection " + std::to_string(connection_id));
}

int64_t CloseOpenAgentConnections(pqxx::work& tx, int64_t at_ns, const std::string& reason) {
  return tx
      .exec_params(
          "UPDATE agent_connections SET disconnected_at = det_ts($1), reason = $2"
          " WHERE disconnected_at IS NULL",
          at_ns, reason)
      .affected_rows();
}

int64_t CloseAgentConnectionsOf(pqxx::work& tx, const std::string& agent_id, int64_t at_ns,
                                const std::string& reason) {
  return tx
      .exec_params(
          "UPDATE agent_connections SET disconnected_at = det_ts($2), reason = $3"
          " WHERE agent_id = $1 AND disconnected_at IS NULL",
          agent_id, at_ns, reason)
      .affected_rows();
}

std::vector<AgentConnectionRecord> AgentConnectionHistory(pqxx::work& tx,
                                                          const std::string& agent_id, int limit) {
  std::vector<AgentConnectionRecord> history;
  for (const auto& row : tx.exec_params(
           "SELECT id, agent_id, det_ns(connected_at), det_ns(disconnected_at), reason"
           " FROM agent_connections WHERE agent_id = $1 ORDER BY connected_at DESC, id DESC"
           " LIMIT $2",
           agent_id, limit)) {
    history.push_back({row[0].as<int64_t>(), row[1].as<std::string>(), row[2].as<int64_t>(),
                       Nullable<int64_t>(row[3]), row[4].as<std::string>()});
  }
  return history;
}

}  // namespace det::storage
