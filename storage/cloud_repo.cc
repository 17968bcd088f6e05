#include "storage/cloud_repo.h"

#include "storage/sql_support.h"

namespace det::storage {
namespace {

constexpr const char* kInstanceSelect =
    "SELECT id, provider, resource_pool, instance_type, spot, state, agent_id,"
    " det_ns(launched_at), det_ns(terminated_at), zone, agent_state FROM instances";

InstanceRecord ReadInstance(const pqxx::row& row) {
  return {row[0].as<std::string>(),      row[1].as<std::string>(), row[2].as<std::string>(),
          row[3].as<std::string>(),      row[4].as<bool>(),        row[5].as<std::string>(),
          Nullable<std::string>(row[6]), row[7].as<int64_t>(),     Nullable<int64_t>(row[8]),
          row[9].as<std::string>(),      row[10].as<std::string>()};
}

}  // namespace

void UpsertInstance(pqxx::work& tx, const InstanceRecord& i) {
  tx.exec_params(
      "INSERT INTO instances (id, provider, resource_pool, instance_type, spot, state, agent_id,"
      " launched_at, terminated_at, zone, agent_state)"
      " VALUES ($1, $2, $3, $4, $5, $6, $7, det_ts($8), det_ts($9), $10, $11)"
      " ON CONFLICT (id) DO UPDATE SET instance_type = EXCLUDED.instance_type,"
      " state = EXCLUDED.state, agent_id = coalesce(EXCLUDED.agent_id, instances.agent_id),"
      " terminated_at = coalesce(EXCLUDED.terminated_at, instances.terminated_at),"
      " zone = EXCLUDED.zone, agent_state = EXCLUDED.agent_state",
      i.id, i.provider, i.resource_pool, i.instance_type, i.spot, i.state, i.agent_id,
      i.launched_ns, i.terminated_ns, i.zone, i.agent_state);
}

Status SetInstanceState(pqxx::work& tx, const std::string& id, const std::string& state,
                        std::optional<int64_t> terminated_ns) {
  return ExpectUpdated(tx.exec_params("UPDATE instances SET state = $2,"
                                      " terminated_at = coalesce(det_ts($3), terminated_at)"
                                      " WHERE id = $1",
                                      id, state, terminated_ns),
                       "instance \"" + id + "\"");
}

Status SetInstanceAgent(pqxx::work& tx, const std::string& id, const std::string& agent_id) {
  return ExpectUpdated(
      tx.exec_params("UPDATE instances SET agent_id = $2 WHERE id = $1", id, agent_id),
      "instance \"" + id + "\"");
}

Result<InstanceRecord> GetInstance(pqxx::work& tx, const std::string& id) {
  auto result = tx.exec_params(std::string(kInstanceSelect) + " WHERE id = $1", id);
  if (result.empty()) return NotFound("instance \"" + id + "\" not found");
  return ReadInstance(result[0]);
}

std::vector<InstanceRecord> ListInstances(pqxx::work& tx, const std::string& resource_pool,
                                          bool live_only) {
  std::vector<InstanceRecord> instances;
  for (const auto& row :
       tx.exec_params(std::string(kInstanceSelect) + " WHERE ($1 = '' OR resource_pool = $1) AND"
                                                     " (NOT $2 OR terminated_at IS NULL)"
                                                     " ORDER BY launched_at, id",
                      resource_pool, live_only)) {
    instances.push_back(ReadInstance(row));
  }
  return instances;
}

int64_t RecordScalingDecision(pqxx::work& tx, const ScalingDecisionRecord& d) {
  return tx
      .exec_params1(
          "INSERT INTO scaling_decisions (resource_pool, decided_at, launch, terminate, reasons,"
          " launched, error) VALUES ($1, det_ts($2), $3, $4::jsonb, $5::jsonb, $6::jsonb, $7)"
          " RETURNING id",
          d.resource_pool, d.decided_ns, d.launch, d.terminate_json, d.reasons_json,
          d.launched_json, d.error)[0]
      .as<int64_t>();
}

std::vector<ScalingDecisionRecord> ListScalingDecisions(pqxx::work& tx,
                                                        const std::string& resource_pool,
                                                        int limit) {
  std::vector<ScalingDecisionRecord> decisions;
  for (const auto& row : tx.exec_params(
           "SELECT id, resource_pool, det_ns(decided_at), launch, terminate::text, reasons::text,"
           " launched::text, error FROM scaling_decisions WHERE ($1 = '' OR resource_pool = $1)"
           " ORDER BY decided_at DESC, id DESC LIMIT $2",
           resource_pool, limit)) {
    decisions.push_back({row[0].as<int64_t>(), row[1].as<std::string>(), row[2].as<int64_t>(),
                         row[3].as<int32_t>(), row[4].as<std::string>(), row[5].as<std::string>(),
                         row[6].as<std::string>(), row[7].as<std::string>()});
  }
  return decisions;
}

std::map<std::string, ScalingTotals> ScalingTotalsByPool(pqxx::work& tx) {
  std::map<std::string, ScalingTotals> totals;
  for (const auto& row :
       tx.exec("SELECT resource_pool, count(*), sum(jsonb_array_length(launched)),"
               " sum(jsonb_array_length(terminate)), count(*) FILTER (WHERE error <> '')"
               " FROM scaling_decisions GROUP BY resource_pool")) {
    totals[row[0].as<std::string>()] = {row[1].as<int64_t>(), row[2].as<int64_t>(),
                                        row[3].as<int64_t>(), row[4].as<int64_t>()};
  }
  return totals;
}

}  // namespace det::storage
