#include "master/cluster/task_recovery.h"

#include <map>
#include <nlohmann/json.hpp>

#include "storage/tasks_repo.h"

namespace det::master {

Result<TaskSpec> ParseTaskConfigJson(const std::string& json, std::string* job_id,
                                     int32_t* restarts) {
  auto config = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (!config.is_object()) return InvalidArgument("task config is not a JSON object: " + json);
  try {
    TaskSpec spec;
    spec.entrypoint = config.at("entrypoint").get<std::vector<std::string>>();
    spec.slots = config.value("slots", 1);
    spec.resource_pool = config.value("resource_pool", "default");
    spec.env = config.value("env", std::map<std::string, std::string>{});
    if (config.contains("priority")) spec.priority = config.at("priority").get<int32_t>();
    spec.weight = config.value("weight", 1.0);
    spec.preemptible = config.value("preemptible", false);
    spec.single_node = config.value("single_node", true);
    if (config.contains("max_slots")) spec.max_slots = config.at("max_slots").get<int32_t>();
    spec.max_restarts = config.value("max_restarts", 0);
    spec.owner = config.value("owner", "");
    spec.description = config.value("description", "");
    if (config.contains("container")) {
      const nlohmann::json& c = config.at("container");
      spec.container.image = c.value("image", "");
      spec.container.images = c.value("images", std::map<std::string, std::string>{});
      spec.container.force_pull = c.value("force_pull", false);
      spec.container.registry_auth_json = c.value("registry_auth_json", "");
      spec.container.shm_size_bytes = c.value("shm_size_bytes", int64_t{0});
      spec.container.binds = c.value("binds", std::vector<std::string>{});
    }
    if (config.contains("run_as")) {
      const nlohmann::json& a = config.at("run_as");
      spec.run_as =
          bus::AgentUserGroup{a.at("uid").get<int32_t>(), a.at("gid").get<int32_t>(),
                              a.at("user").get<std::string>(), a.at("group").get<std::string>()};
    }
    if (job_id) *job_id = config.value("job_id", "");
    if (restarts) *restarts = config.value("restarts", 0);
    return spec;
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument(std::string("task config: ") + e.what());
  }
}

namespace {

// agents_json is [{"agent": id, "slots": [...]}, ...] (TaskPersistence): one entry per agent.
void ApplyPlacement(const storage::AllocationRecord& allocation, Task* task) {
  auto agents = nlohmann::json::parse(allocation.agents_json, nullptr, false);
  if (!agents.is_array()) return;
  for (const auto& agent : agents) {
    if (!agent.is_object()) continue;
    Resource resource;
    resource.agent_id = agent.value("agent", "");
    resource.slot_ids = agent.value("slots", std::vector<std::string>{});
    resource.state = allocation.state;
    if (!resource.agent_id.empty()) task->resources.push_back(std::move(resource));
  }
  task->allocation_id = allocation.id;
  task->state = task->resources.empty() ? "QUEUED" : allocation.state;
}

}  // namespace

Result<std::vector<Task>> LoadOpenTasks(storage::Database& database) {
  std::vector<Task> tasks;
  Status loaded = database.Run([&](pqxx::work& tx) {
    tasks.clear();
    std::map<std::string, storage::AllocationRecord> allocations;
    for (auto& a : storage::ListOpenAllocations(tx)) allocations[a.task_id] = std::move(a);
    const std::map<std::string, int32_t> counts = storage::CountOpenTaskAllocations(tx);
    for (const storage::TaskRecord& record : storage::ListOpenTasks(tx)) {
      Task task;
      DET_ASSIGN_OR_RETURN(task.spec,
                           ParseTaskConfigJson(record.config_json, &task.job_id, &task.restarts));
      task.id = record.id;
      task.type = record.type;
      task.submitted_ns = record.start_ns;
      if (auto count = counts.find(record.id); count != counts.end()) {
        task.allocations = count->second;
      }
      if (auto a = allocations.find(record.id); a != allocations.end()) {
        ApplyPlacement(a->second, &task);
      }
      tasks.push_back(std::move(task));
    }
    return Status::Ok();
  });
  if (!loaded.ok()) return loaded.WithContext("loading unfinished tasks");
  return tasks;
}

}  // namespace det::master
