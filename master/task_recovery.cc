#include "master/task_recovery.h"

#include <map>
#include <nlohmann/json.hpp>

#include "storage/tasks_repo.h"

namespace det::master {

Result<TaskSpec> ParseTaskConfigJson(const std::string& json) {
  auto config = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (!config.is_object()) return InvalidArgument("task config is not a JSON object: " + json);
  try {
    TaskSpec spec;
    spec.entrypoint = config.at("entrypoint").get<std::vector<std::string>>();
    spec.slots = config.value("slots", 1);
    spec.resource_pool = config.value("resource_pool", "default");
    spec.env = config.value("env", std::map<std::string, std::string>{});
    return spec;
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument(std::string("task config: ") + e.what());
  }
}

namespace {

// agents_json is [{"agent": id, "slots": [...]}] (TaskPersistence); first fit uses one agent.
void ApplyPlacement(const std::string& agents_json, Task* task) {
  auto agents = nlohmann::json::parse(agents_json, nullptr, false);
  if (!agents.is_array() || agents.empty() || !agents[0].is_object()) return;
  task->agent_id = agents[0].value("agent", "");
  task->slot_ids = agents[0].value("slots", std::vector<std::string>{});
}

}  // namespace

Result<std::vector<Task>> LoadOpenTasks(storage::Database& database) {
  std::vector<Task> tasks;
  Status loaded = database.Run([&](pqxx::work& tx) {
    tasks.clear();
    std::map<std::string, storage::AllocationRecord> allocations;
    for (auto& a : storage::ListOpenAllocations(tx)) allocations[a.task_id] = std::move(a);
    for (const storage::TaskRecord& record : storage::ListOpenTasks(tx)) {
      DET_ASSIGN_OR_RETURN(TaskSpec spec, ParseTaskConfigJson(record.config_json));
      Task task;
      task.id = record.id;
      task.type = record.type;
      task.spec = std::move(spec);
      task.submitted_ns = record.start_ns;
      if (auto a = allocations.find(record.id); a != allocations.end()) {
        task.allocation_id = a->second.id;
        task.state = a->second.state;
        ApplyPlacement(a->second.agents_json, &task);
      }
      tasks.push_back(std::move(task));
    }
    return Status::Ok();
  });
  if (!loaded.ok()) return loaded.WithContext("loading unfinished tasks");
  return tasks;
}

}  // namespace det::master
