#include "master/cluster/task_persistence.h"

#include <nlohmann/json.hpp>

#include "storage/tasks_repo.h"

namespace det::master {
namespace {

std::optional<int32_t> ExitCode(int32_t code) {
  return code >= 0 ? std::optional<int32_t>(code) : std::nullopt;
}

// The failure column: "<type>: <message>", or nothing for a clean end.
std::optional<std::string> Failure(const std::string& type, const std::string& message) {
  if (type.empty()) return std::nullopt;
  return type + ": " + message;
}

Store::Statement FinishStatement(std::string allocation_id, int64_t end_ns,
                                 std::optional<int32_t> exit_code,
                                 std::optional<std::string> failure) {
  return [=](pqxx::transaction_base& tx) {
    return storage::FinishAllocationSql(tx, allocation_id, std::string(bus::kWorkloadTerminated),
                                        end_ns, exit_code, failure);
  };
}

Store::Statement QueuedStatement(const Task& task) {
  storage::TaskRecord record{task.id,           task.type,   std::nullopt, TaskConfigJson(task),
                             task.submitted_ns, std::nullopt};
  Store::Statement finish_last;
  if (task.last_end) {  // queued again after a preemption: the allocation before is over
    const AllocationEnd& end = *task.last_end;
    finish_last = FinishStatement(
        end.allocation_id, end.ended_ns, ExitCode(end.exit_code),
        "Preempted: " + (end.failure_type.empty() ? "" : end.failure_type + ": ") + end.message);
  }
  return [record, finish_last](pqxx::transaction_base& tx) {
    std::string sql = storage::CreateTaskSql(tx, record);
    if (finish_last) sql += ";\n" + finish_last(tx);
    return sql;
  };
}

Store::Statement PlacedStatement(const Task& task) {
  nlohmann::json agents = nlohmann::json::array();
  for (const Resource& resource : task.resources) {
    agents.push_back({{"agent", resource.agent_id}, {"slots", resource.slot_ids}});
  }
  storage::AllocationRecord record{task.allocation_id, task.id,       task.spec.resource_pool,
                                   task.spec.slots,    agents.dump(), task.state};
  return [record](pqxx::transaction_base& tx) { return storage::CreateAllocationSql(tx, record); };
}

}  // namespace

std::string TaskConfigJson(const Task& task) {
  const TaskSpec& spec = task.spec;
  nlohmann::json config = {{"entrypoint", spec.entrypoint},
                           {"slots", spec.slots},
                           {"resource_pool", spec.resource_pool},
                           {"env", spec.env},
                           {"weight", spec.weight},
                           {"preemptible", spec.preemptible},
                           {"single_node", spec.single_node},
                           {"job_id", task.job_id}};
  if (spec.priority) config["priority"] = *spec.priority;
  if (spec.max_slots) config["max_slots"] = *spec.max_slots;
  if (spec.max_restarts > 0) {
    config["max_restarts"] = spec.max_restarts;
    config["restarts"] = task.restarts;
  }
  if (!spec.owner.empty()) config["owner"] = spec.owner;
  if (!spec.description.empty()) config["description"] = spec.description;
  if (spec.run_as) {
    config["run_as"] = {{"uid", spec.run_as->uid},
                        {"gid", spec.run_as->gid},
                        {"user", spec.run_as->user},
                        {"group", spec.run_as->group}};
  }
  if (!spec.container.empty()) {
    const bus::ContainerSpec& c = spec.container;
    config["container"] = {{"image", c.image},
                           {"images", c.images},
                           {"force_pull", c.force_pull},
                           {"registry_auth_json", c.registry_auth_json},
                           {"shm_size_bytes", c.shm_size_bytes},
                           {"binds", c.binds}};
  }
  return config.dump();
}

Store::Statement PersistTaskChange(const Task& task) {
  if (task.state == "QUEUED") return QueuedStatement(task);
  if (task.state == bus::kWorkloadAssigned) return PlacedStatement(task);
  if (task.ended()) {
    const std::string task_id = task.id;
    const int64_t end_ns = task.ended_ns;
    Store::Statement finish;
    if (!task.allocation_id.empty()) {
      finish = FinishStatement(task.allocation_id, end_ns, ExitCode(task.exit_code),
                               Failure(task.failure_type, task.message));
    }
    return [=](pqxx::transaction_base& tx) {
      std::string sql = finish ? finish(tx) + ";\n" : "";
      return sql + storage::EndTaskSql(tx, task_id, end_ns);
    };
  }
  const std::string allocation_id = task.allocation_id, state = task.state;
  return [=](pqxx::transaction_base& tx) {
    return storage::SetAllocationStateSql(tx, allocation_id, state);
  };
}

std::string TaskChangeSupersedes(const Task& task) {
  if (task.state == "QUEUED" || task.state == bus::kWorkloadAssigned) return "";
  return task.allocation_id.empty() ? "" : "allocation-state/" + task.allocation_id;
}

Store::Commit TaskChangeCommit(const Task& task) {
  return task.state == "QUEUED" || task.ended() ? Store::Commit::kDurable : Store::Commit::kLazy;
}

Store::Op PersistTaskSettings(const Task& task) {
  const std::string id = task.id, config = TaskConfigJson(task);
  return [=](pqxx::work& tx) { (void)storage::SetTaskConfig(tx, id, config); };
}

}  // namespace det::master
