#include "master/task_persistence.h"

#include <nlohmann/json.hpp>

#include "storage/tasks_repo.h"

namespace det::master {

std::string TaskConfigJson(const TaskSpec& spec) {
  nlohmann::json config = {{"entrypoint", spec.entrypoint},
                           {"slots", spec.slots},
                           {"resource_pool", spec.resource_pool},
                           {"env", spec.env}};
  return config.dump();
}

Store::Op PersistTaskChange(const Task& task) {
  if (task.state == "QUEUED") {
    storage::TaskRecord record{task.id,           task.type,
                               std::nullopt,      TaskConfigJson(task.spec),
                               task.submitted_ns, std::nullopt};
    return [record](pqxx::work& tx) { storage::CreateTask(tx, record); };
  }
  if (task.state == bus::kWorkloadAssigned) {
    nlohmann::json agents =
        nlohmann::json::array({{{"agent", task.agent_id}, {"slots", task.slot_ids}}});
    storage::AllocationRecord record{task.allocation_id, task.id,       task.spec.resource_pool,
                                     task.spec.slots,    agents.dump(), task.state};
    return [record](pqxx::work& tx) { storage::CreateAllocation(tx, record); };
  }
  if (task.ended()) {
    std::optional<int32_t> exit_code;
    if (task.exit_code >= 0) exit_code = task.exit_code;
    std::optional<std::string> failure;
    if (!task.failure_type.empty()) failure = task.failure_type + ": " + task.message;
    const std::string task_id = task.id, allocation_id = task.allocation_id;
    const int64_t end_ns = task.ended_ns;
    return [=](pqxx::work& tx) {
      if (!allocation_id.empty()) {
        (void)storage::FinishAllocation(tx, allocation_id, std::string(bus::kWorkloadTerminated),
                                        end_ns, exit_code, failure);
      }
      (void)storage::EndTask(tx, task_id, end_ns);
    };
  }
  const std::string allocation_id = task.allocation_id, state = task.state;
  return [=](pqxx::work& tx) { (void)storage::SetAllocationState(tx, allocation_id, state); };
}

}  // namespace det::master
