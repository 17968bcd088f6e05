#pragma once

// Cloud instances the autoscaler launched, and each scaling decision with its reasons.
//
// Functions take the caller's transaction (Database::Run). Times are Unix nanoseconds.

#include <cstdint>
#include <map>
#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "common/status.h"

namespace det::storage {

struct InstanceRecord {
  std::string id;        // the provider's instance id
  std::string provider;  // aws | gcp
  std::string resource_pool;
  std::string instance_type;
  bool spot = false;
  std::string state;
  std::optional<std::string> agent_id;  // once its agent has connected
  int64_t launched_ns = 0;
  std::optional<int64_t> terminated_ns;
  std::string zone;
  std::string agent_state;  // connected | idle | lost | "" (none)
};

// Inserts the instance or updates its type, state and agent (launch time and provider stay).
void UpsertInstance(pqxx::work& tx, const InstanceRecord& instance);
Status SetInstanceState(pqxx::work& tx, const std::string& id, const std::string& state,
                        std::optional<int64_t> terminated_ns);  // NotFound
Status SetInstanceAgent(pqxx::work& tx, const std::string& id, const std::string& agent_id);
Result<InstanceRecord> GetInstance(pqxx::work& tx, const std::string& id);  // NotFound
// The pool's instances ("": every pool's), oldest first; `live_only` leaves out terminated ones.
std::vector<InstanceRecord> ListInstances(pqxx::work& tx, const std::string& resource_pool,
                                          bool live_only);

struct ScalingDecisionRecord {
  int64_t id = 0;  // set by the database
  std::string resource_pool;
  int64_t decided_ns = 0;
  int32_t launch = 0;                 // instances to launch
  std::string terminate_json = "[]";  // instance ids to terminate
  std::string reasons_json = "[]";    // why, one string per reason
  std::string launched_json = "[]";   // ids of the instances launched
  std::string error;                  // what kept the decision from being carried out
};

int64_t RecordScalingDecision(pqxx::work& tx, const ScalingDecisionRecord& decision);
// Newest first; `resource_pool` "" lists every pool's.
std::vector<ScalingDecisionRecord> ListScalingDecisions(pqxx::work& tx,
                                                        const std::string& resource_pool,
                                                        int limit);

// What /metrics counts of a pool's decisions: how many, instances launched and terminated, and
// decisions that carried an error.
struct ScalingTotals {
  int64_t decisions = 0;
  int64_t launched = 0;
  int64_t terminated = 0;
  int64_t errors = 0;
};
std::map<std::string, ScalingTotals> ScalingTotalsByPool(pqxx::work& tx);

}  // namespace det::storage
