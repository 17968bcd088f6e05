#include "master/front/http/command_routes.h"

#include "common/clock.h"
#include "common/config.h"
#include "common/yaml_json.h"
#include "master/experiments/experiment/experiment_config.h"
#include "master/front/http/cluster_shapes.h"
#include "master/front/http/json.h"
#include "master/front/http/user_routes.h"

namespace det::master::http {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;
using Caller = const auth::Principal&;
using Req = const Request&;

// Determined's states of a task (taskv1State) for this master's task states.
std::string TaskStateName(const std::string& state) {
  if (state == "ASSIGNED") return "STATE_STARTING";
  if (state == "QUEUED" || state == "PULLING" || state == "STARTING" || state == "RUNNING" ||
      state == "TERMINATED" || state == "TERMINATING") {
    return "STATE_" + state;
  }
  return "STATE_UNSPECIFIED";
}

// How it ended, in words ("" while it runs).
std::string ExitStatus(const bus::TaskSummary& task) {
  if (task.state != "TERMINATED") return "";
  if (!task.failure_type.empty()) return task.failure_type + ": " + task.message;
  return "exited with code " + std::to_string(task.exit_code);
}

ordered_json CommandJson(const bus::TaskSummary& task) {
  std::string description = task.description;
  if (description.empty()) {
    description = "Command";
    for (const auto& word : task.entrypoint) description += " " + word;
  }
  return {{"id", task.id},
          {"description", description},
          {"state", TaskStateName(task.state)},
          {"username", task.owner},
          {"workspaceId", kDefaultWorkspaceId},
          {"resourcePool", task.resource_pool},
          {"startTime", TimeText(task.submitted_at)},
          {"exitStatus", ExitStatus(task)},
          {"jobId", task.id},
          {"displayName", task.owner}};
}

// The config a command runs with, in Determined's names (what GetCommand answers).
ordered_json CommandConfigJson(const bus::TaskSummary& task) {
  return {{"description", CommandJson(task)["description"]},
          {"entrypoint", task.entrypoint},
          {"resources", {{"slots", task.slots}, {"resource_pool", task.resource_pool}}}};
}

void ReadResources(ConfigReader& resources, bus::CommandRunRequest* run) {
  resources.AllowOtherKeys();
  int slots = run->slots;
  resources.ReadInt("slots", &slots, 0, 1 << 20);
  run->slots = slots;
  resources.Read("resource_pool", &run->resource_pool);
  if (resources.node()["priority"]) {
    int priority = 42;
    resources.ReadInt("priority", &priority, 1, 99);
    run->priority = priority;
  }
  resources.Read("weight", &run->weight);
  if (resources.node()["max_slots"] && !resources.node()["max_slots"].IsNull()) {
    int max_slots = 0;
    resources.ReadInt("max_slots", &max_slots, 0, 1 << 20);
    run->max_slots = max_slots;
  }
  resources.Read("is_single_node", &run->single_node);
  std::string shm_size;
  resources.Read("shm_size", &shm_size);
  if (!shm_size.empty()) {
    Result<int64_t> bytes = ParseByteSize(shm_size);
    if (!bytes.ok()) return resources.Fail("shm_size", bytes.status().message());
    run->container.shm_size_bytes = *bytes;
  }
}

void ReadEntrypoint(ConfigReader& config, bus::CommandRunRequest* run) {
  const YAML::Node entrypoint = config.Raw("entrypoint");
  if (!entrypoint || entrypoint.IsNull()) {
    return config.Fail("entrypoint", "is required (a list of strings or shell text)");
  }
  if (entrypoint.IsScalar()) {
    run->entrypoint = {entrypoint.as<std::string>()};
  } else {
    config.Read("entrypoint", &run->entrypoint);
  }
  if (run->entrypoint.empty()) config.Fail("entrypoint", "must not be empty");
}

// Determined's command config, read as a YAML document with an experiment's names and checks.
Status ReadCommandConfig(const json& config, bus::CommandRunRequest* run) {
  // JSON is YAML, mostly: yaml-cpp refuses keys longer than 1024 characters.
  DET_ASSIGN_OR_RETURN(const YAML::Node doc, ParseYaml(config.dump(), "config"));
  ConfigReader reader(doc, "config");
  reader.AllowOtherKeys();  // work_dir, debug, idle_timeout, ...: nothing to do here
  ReadEntrypoint(reader, run);
  reader.Read("description", &run->description);
  ReadResources(reader.Child("resources"), run);
  experiment::ContainerEnvironment environment;
  ConfigReader& env = reader.Child("environment");
  env.AllowOtherKeys();
  experiment::ReadEnvironment(env, &run->env, &environment);
  run->container.image = environment.image;
  run->container.images = environment.images;
  run->container.force_pull = environment.force_pull_image;
  run->container.registry_auth_json = environment.registry_auth_json;
  const YAML::Node binds = reader.Raw("bind_mounts");
  if (binds && !binds.IsNull() && !(binds.IsSequence() && binds.size() == 0)) {
    reader.Fail("bind_mounts", "a command may not mount host folders here");
  }
  reader.Read("preemptible", &run->preemptible);
  int max_restarts = 0;
  reader.ReadInt("max_restarts", &max_restarts, 0, bus::CommandRunRequest::kMaxRestartsLimit);
  run->max_restarts = max_restarts;
  reader.Read("array", &run->array);
  return reader.Finish();
}

Result<bus::TaskSummary> CommandOf(FrontDoor& front, Caller caller, const std::string& id) {
  DET_ASSIGN_OR_RETURN(bus::TaskGetReply reply, front.calls.Call(caller, bus::TaskGetRequest{id}));
  if (reply.task.type != "COMMAND") return NotFound("command " + id + " not found");
  return reply.task;
}

}  // namespace

Result<bus::CommandRunRequest> CommandRunRequestOf(const std::string& text) {
  DET_ASSIGN_OR_RETURN(json body, ParseJsonObject(text));
  if (!body.contains("config") || !body["config"].is_object()) {
    return InvalidArgument(
        "config: is required (Determined's command config: entrypoint, resources, "
        "environment, ...)");
  }
  if (body.contains("templateName") && !body["templateName"].is_null()) {
    return InvalidArgument("templateName: config templates are not served yet");
  }
  if (body.contains("files") && body["files"].is_array() && !body["files"].empty()) {
    return InvalidArgument("files: a command's context folder is not taken yet");
  }
  bus::CommandRunRequest run;
  DET_RETURN_IF_ERROR(ReadCommandConfig(body["config"], &run));
  return run;
}

void RouteCommandApi(Router& routes, FrontDoor& front) {
  auto users = [&front](UserHandler handler) {
    return ForUsers(front.calls.users(), std::move(handler));
  };
  routes.Post("/api/v1/commands", users([&front](Caller caller, Req req) -> UserAnswer {
                DET_ASSIGN_OR_RETURN(bus::CommandRunRequest run, CommandRunRequestOf(req.body));
                DET_ASSIGN_OR_RETURN(bus::CommandRunReply reply, front.calls.Call(caller, run));
                DET_ASSIGN_OR_RETURN(bus::TaskSummary task,
                                     CommandOf(front, caller, reply.task_id));
                ordered_json answer{{"command", CommandJson(task)},
                                    {"config", CommandConfigJson(task)},
                                    {"warnings", ordered_json::array()}};
                if (reply.array_size > 0) answer["arraySize"] = reply.array_size;
                return answer;
              }));
  routes.Get("/api/v1/commands", users([&front](Caller caller, Req req) -> UserAnswer {
               const std::vector<std::string> owners = QueryList(req, "users");
               DET_ASSIGN_OR_RETURN(bus::TaskList list,
                                    front.calls.Call(caller, bus::TaskListRequest{}));
               ordered_json commands = ordered_json::array();
               for (const auto& task : list.tasks) {
                 if (task.type != "COMMAND") continue;
                 if (!owners.empty() &&
                     std::find(owners.begin(), owners.end(), task.owner) == owners.end()) {
                   continue;
                 }
                 commands.push_back(CommandJson(task));
               }
               const size_t size = commands.size();
               return ordered_json{{"commands", std::move(commands)},
                                   {"pagination", PaginationJson(PageOf(0, 0, size))}};
             }));
  routes.Get(
      "/api/v1/commands/{command_id}", users([&front](Caller caller, Req req) -> UserAnswer {
        DET_ASSIGN_OR_RETURN(bus::TaskSummary task, CommandOf(front, caller, req.Match(1)));
        return ordered_json{{"command", CommandJson(task)}, {"config", CommandConfigJson(task)}};
      }));
  routes.Post(
      "/api/v1/commands/{command_id}/kill", users([&front](Caller caller, Req req) -> UserAnswer {
        DET_RETURN_IF_ERROR(CommandOf(front, caller, req.Match(1)).status());
        DET_RETURN_IF_ERROR(front.calls.Call(caller, bus::TaskKillRequest{req.Match(1)}).status());
        DET_ASSIGN_OR_RETURN(bus::TaskSummary task, CommandOf(front, caller, req.Match(1)));
        return ordered_json{{"command", CommandJson(task)}};
      }));
}

}  // namespace det::master::http
