#include "master/front/http/cluster_routes.h"

#include <memory>
#include <thread>

#include "bus/catalog/cluster_json.h"
#include "common/clock.h"
#include "common/config.h"
#include "master/experiments/experiment/experiment_config.h"
#include "master/front/answer_cache.h"
#include "master/front/http/json.h"
#include "master/front/http/user_routes.h"

namespace det::master::http {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;
using Caller = const auth::Principal&;
using Req = const Request&;

constexpr auto kFollowPoll = std::chrono::milliseconds(200);
constexpr const char* kAgentsAnswer = "agents";
constexpr const char* kPoolsAnswer = "resource-pools";
constexpr const char* kJobsAnswer = "job-queues";
constexpr auto kUnstoredTaskGrace = std::chrono::seconds(10);

ordered_json AgentJson(const Result<bus::AgentReply>& reply) {
  return ordered_json{{"agent", bus::ToJson(reply->agent)}};
}

Result<bus::AgentSummary> FindAgent(FrontDoor& front, Caller caller, const std::string& id) {
  DET_ASSIGN_OR_RETURN(bus::AgentList list, front.calls.Call(caller, bus::AgentListRequest{}));
  for (auto& agent : list.agents) {
    if (agent.id == id) return agent;
  }
  return NotFound("agent \"" + id + "\" not found");
}

ordered_json SlotsJson(const bus::AgentSummary& agent) {
  ordered_json slots = ordered_json::array();
  for (const auto& slot : agent.slots) {
    const bool disabled = std::find(agent.disabled_slots.begin(), agent.disabled_slots.end(),
                                    slot.id) != agent.disabled_slots.end();
    slots.push_back({{"id", slot.id},
                     {"type", slot.type},
                     {"brand", slot.brand},
                     {"uuid", slot.uuid},
                     {"memory_mib", slot.memory_mib},
                     {"enabled", !disabled}});
  }
  return ordered_json{{"slots", slots}};
}

// A command's `environment` (image, force_pull_image, registry_auth) and `resources.shm_size`,
// with an experiment's names and checks.
Status ReadCommandContainer(const json& body, bus::ContainerSpec* container) {
  // JSON is YAML, mostly: yaml-cpp refuses keys longer than 1024 characters.
  DET_ASSIGN_OR_RETURN(const YAML::Node config, ParseYaml(body.dump(), "request body"));
  ConfigReader reader(config);
  reader.AllowOtherKeys();
  experiment::ContainerEnvironment environment;
  ConfigReader& env = reader.Child("environment");
  env.AllowOtherKeys();
  experiment::ReadContainerEnvironment(env, &environment);
  std::string shm_size;
  ConfigReader& resources = reader.Child("resources");
  resources.AllowOtherKeys();
  resources.Read("shm_size", &shm_size);
  DET_RETURN_IF_ERROR(reader.Finish());
  container->image = environment.image;
  container->images = environment.images;
  container->force_pull = environment.force_pull_image;
  container->registry_auth_json = environment.registry_auth_json;
  if (!shm_size.empty()) {
    Result<int64_t> bytes = ParseByteSize(shm_size);
    if (!bytes.ok()) return bytes.status().WithContext("resources.shm_size");
    container->shm_size_bytes = *bytes;
  }
  return Status::Ok();
}

}  // namespace

Result<bus::CommandRunRequest> CommandRunRequestOf(const std::string& text) {
  DET_ASSIGN_OR_RETURN(json body, ParseJsonObject(text));
  bus::CommandRunRequest run;
  if (body.contains("entrypoint") && body["entrypoint"].is_string()) {
    run.entrypoint = {body["entrypoint"].get<std::string>()};
  } else {
    DET_ASSIGN_OR_RETURN(run.entrypoint, Field<std::vector<std::string>>(
                                             body, "entrypoint", "a list of strings or a string"));
  }
  if (run.entrypoint.empty()) return InvalidArgument("entrypoint: must not be empty");
  if (body.contains("slots")) {
    DET_ASSIGN_OR_RETURN(run.slots, Field<int32_t>(body, "slots", "a whole number"));
  }
  if (body.contains("resource_pool")) {
    DET_ASSIGN_OR_RETURN(run.resource_pool, Field<std::string>(body, "resource_pool", "a string"));
  }
  if (body.contains("env")) {
    DET_ASSIGN_OR_RETURN(
        run.env, (Field<std::map<std::string, std::string>>(body, "env", "an object of strings")));
  }
  if (body.contains("priority")) {
    DET_ASSIGN_OR_RETURN(run.priority, Field<int32_t>(body, "priority", "1 to 99"));
  }
  if (body.contains("weight")) {
    DET_ASSIGN_OR_RETURN(run.weight, Field<double>(body, "weight", "a number"));
  }
  if (body.contains("preemptible")) {
    DET_ASSIGN_OR_RETURN(run.preemptible, Field<bool>(body, "preemptible", "true or false"));
  }
  if (body.contains("array")) {
    DET_ASSIGN_OR_RETURN(run.array, Field<std::string>(body, "array", "a string like \"1-1000\""));
  }
  if (body.contains("max_restarts")) {
    DET_ASSIGN_OR_RETURN(run.max_restarts,
                         Field<int32_t>(body, "max_restarts", "a whole number from 0 to 1000"));
  }
  DET_RETURN_IF_ERROR(ReadCommandContainer(body, &run.container));
  return run;
}

Result<bus::JobUpdateRequest> JobUpdateRequestOf(const std::string& job_id,
                                                 const std::string& text) {
  DET_ASSIGN_OR_RETURN(json body, ParseJsonObject(text));
  bus::JobUpdateRequest update;
  update.job_id = job_id;
  if (body.contains("priority")) {
    DET_ASSIGN_OR_RETURN(update.priority, Field<int32_t>(body, "priority", "1 to 99"));
  }
  if (body.contains("weight")) {
    DET_ASSIGN_OR_RETURN(update.weight, Field<double>(body, "weight", "a number"));
  }
  if (body.contains("resource_pool")) {
    DET_ASSIGN_OR_RETURN(update.resource_pool,
                         Field<std::string>(body, "resource_pool", "a string"));
  }
  if (!update.priority && !update.weight && !update.resource_pool) {
    return InvalidArgument(
        "request body: nothing to change; give \"priority\", \"weight\" or \"resource_pool\"");
  }
  return update;
}

Result<bus::AgentEnableRequest> AgentEnableRequestOf(const std::string& agent_id, bool enable,
                                                     const std::string& text) {
  bus::AgentEnableRequest request{agent_id, enable, false};
  if (enable || text.empty()) return request;
  DET_ASSIGN_OR_RETURN(json body, ParseJsonObject(text));
  if (body.contains("drain")) {
    DET_ASSIGN_OR_RETURN(request.drain, Field<bool>(body, "drain", "true or false"));
  }
  return request;
}

namespace {

// `name` (RFC 3339) as Unix nanoseconds; 0 when absent.
Result<int64_t> QueryTime(Req req, const std::string& name) {
  const std::string text = req.Param(name);
  if (text.empty()) return int64_t{0};
  std::optional<int64_t> ns = ParseRfc3339Utc(text);
  if (!ns || *ns <= 0) {
    return InvalidArgument(name + ": \"" + text +
                           "\" is not an RFC 3339 time such as 2026-11-26T10:00:00Z");
  }
  return *ns;
}

// after_id, limit, tail (the last N lines), timestamp_after and timestamp_before (Determined's
// names for a time range).
Result<bus::TaskLogsRequest> LogsRequestOf(Req req) {
  bus::TaskLogsRequest request{req.Match(1), 0, 1000};
  DET_ASSIGN_OR_RETURN(request.after_id, QueryNumber(req, "after_id", 0));
  DET_ASSIGN_OR_RETURN(int64_t limit, QueryNumber(req, "limit", 1000));
  request.limit = static_cast<int32_t>(std::clamp<int64_t>(limit, 1, 10000));
  DET_ASSIGN_OR_RETURN(request.tail, QueryNumber(req, "tail", 0));
  if (request.tail < 0) return InvalidArgument("tail: must not be negative");
  DET_ASSIGN_OR_RETURN(request.since, QueryTime(req, "timestamp_after"));
  DET_ASSIGN_OR_RETURN(request.until, QueryTime(req, "timestamp_before"));
  return request;
}

// GET .../logs?follow=true: NDJSON until the task ended and every line was sent (or the client
// went away), read page by page as the server asks for the next piece; no thread waits between
// pages. The caller was authenticated before the stream starts.
class LogFollow : public BodySource {
 public:
  LogFollow(FrontDoor& front, auth::Principal caller, bus::TaskLogsRequest request)
      : front_(front),
        caller_(std::move(caller)),
        next_(std::move(request)),
        // The task exists (the caller checked), but its record is stored asynchronously: until it
        // is, the database does not know it, which is not an error for this long.
        unstored_until_(front.clock.Now() + kUnstoredTaskGrace) {}

  Piece Next() override {
    auto reply = front_.reads.TaskLogs(caller_, next_);
    if (!reply.ok() && reply.status().code() == StatusCode::kNotFound &&
        front_.clock.Now() < unstored_until_) {
      return {};
    }
    if (!reply.ok()) return {json{{"error", reply.status().message()}}.dump() + "\n", true};
    Piece piece;
    if (next_.tail > 0) {  // the tail's first page: later pages follow on from it
      next_.after_id = reply->start_after_id;
      next_.tail = 0;
    }
    for (const auto& line : reply->lines) {
      piece.data += bus::ToJson(line).dump() + "\n";
      next_.after_id = line.id;
    }
    piece.done = reply->task_ended && reply->lines.empty();
    return piece;
  }
  std::chrono::milliseconds retry() const override { return kFollowPoll; }

 private:
  FrontDoor& front_;
  const auth::Principal caller_;
  bus::TaskLogsRequest next_;
  const MonoTime unstored_until_;
};

ordered_json AgentsJson(const bus::AgentList& list) {
  ordered_json agents = ordered_json::array();
  for (const auto& agent : list.agents) agents.push_back(bus::ToJson(agent));
  return ordered_json{{"agents", agents}};
}

ordered_json PoolsJson(const bus::ResourcePoolList& list) {
  ordered_json pools = ordered_json::array();
  for (const auto& pool : list.pools) pools.push_back(bus::ToJson(pool));
  return ordered_json{{"resource_pools", pools}};
}

ordered_json JobsJson(const bus::JobList& list) {
  ordered_json jobs = ordered_json::array();
  for (const auto& job : list.jobs) jobs.push_back(bus::ToJson(job));
  return ordered_json{{"jobs", jobs}};
}

void RouteAgents(Router& routes, FrontDoor& front, AnswerCache* cache) {
  auto users = [&front](UserHandler handler) {
    return ForUsers(front.calls.users(), std::move(handler));
  };
  routes.Get("/api/v1/agents",
             ForUsersCached(front.calls.users(), cache, kAgentsAnswer,
                            [&front](Caller caller, Req) -> UserAnswer {
                              DET_ASSIGN_OR_RETURN(
                                  bus::AgentList list,
                                  front.calls.Call(caller, bus::AgentListRequest{}));
                              return AgentsJson(list);
                            }));
  routes.Get("/api/v1/agents/{agent_id}", users([&front](Caller caller, Req req) -> UserAnswer {
               DET_ASSIGN_OR_RETURN(bus::AgentSummary agent,
                                    FindAgent(front, caller, req.Match(1)));
               return ordered_json{{"agent", bus::ToJson(agent)}};
             }));
  routes.Get(
      "/api/v1/agents/{agent_id}/slots", users([&front](Caller caller, Req req) -> UserAnswer {
        DET_ASSIGN_OR_RETURN(bus::AgentSummary agent, FindAgent(front, caller, req.Match(1)));
        return SlotsJson(agent);
      }));
  for (const bool enable : {true, false}) {
    const std::string action = enable ? "enable" : "disable";
    routes.Post("/api/v1/agents/{agent_id}/" + action,
                users([&front, enable](Caller caller, Req req) -> UserAnswer {
                  DET_ASSIGN_OR_RETURN(bus::AgentEnableRequest request,
                                       AgentEnableRequestOf(req.Match(1), enable, req.body));
                  auto reply = front.calls.Call(caller, request);
                  if (!reply.ok()) return reply.status();
                  return AgentJson(reply);
                }));
    routes.Post("/api/v1/agents/{agent_id}/slots/{slot_id}/" + action,
                users([&front, enable](Caller caller, Req req) -> UserAnswer {
                  auto reply = front.calls.Call(
                      caller, bus::SlotEnableRequest{req.Match(1), req.Match(2), enable});
                  if (!reply.ok()) return reply.status();
                  return AgentJson(reply);
                }));
  }
}

void RouteJobs(Router& routes, FrontDoor& front, AnswerCache* cache) {
  auto users = [&front](UserHandler handler) {
    return ForUsers(front.calls.users(), std::move(handler));
  };
  routes.Get("/api/v1/resource-pools", ForUsersCached(front.calls.users(), cache, kPoolsAnswer,
                                                      [&front](Caller caller, Req) -> UserAnswer {
                                                        DET_ASSIGN_OR_RETURN(
                                                            bus::ResourcePoolList list,
                                                            front.master.ResourcePools(caller));
                                                        return PoolsJson(list);
                                                      }));
  routes.Get(
      "/api/v1/job-queues",
      ForUsersCached(
          front.calls.users(), cache, kJobsAnswer, [&front](Caller caller, Req req) -> UserAnswer {
            DET_ASSIGN_OR_RETURN(
                bus::JobList list,
                front.calls.Call(caller, bus::JobListRequest{req.Param("resource_pool")}));
            return JobsJson(list);
          }));
  routes.Patch("/api/v1/job-queues/{job_id}", users([&front](Caller caller, Req req) -> UserAnswer {
                 DET_ASSIGN_OR_RETURN(bus::JobUpdateRequest update,
                                      JobUpdateRequestOf(req.Match(1), req.body));
                 DET_ASSIGN_OR_RETURN(bus::JobUpdateReply reply, front.calls.Call(caller, update));
                 return ordered_json{{"job", bus::ToJson(reply.job)}};
               }));
}

void RouteTasks(Router& routes, FrontDoor& front) {
  auto users = [&front](UserHandler handler) {
    return ForUsers(front.calls.users(), std::move(handler));
  };
  routes.Post("/api/v1/commands", users([&front](Caller caller, Req req) -> UserAnswer {
                DET_ASSIGN_OR_RETURN(bus::CommandRunRequest run, CommandRunRequestOf(req.body));
                DET_ASSIGN_OR_RETURN(bus::CommandRunReply reply, front.calls.Call(caller, run));
                ordered_json answer{{"task_id", reply.task_id}};
                if (reply.array_size > 0) answer["array_size"] = reply.array_size;
                return answer;
              }));
  routes.Get("/api/v1/tasks", users([&front](Caller caller, Req req) -> UserAnswer {
               bus::TaskListRequest request;
               request.array_id = req.Param("array_id");
               DET_ASSIGN_OR_RETURN(bus::TaskList list, front.calls.Call(caller, request));
               ordered_json tasks = ordered_json::array();
               for (const auto& task : list.tasks) tasks.push_back(bus::ToJson(task));
               return ordered_json{{"tasks", tasks}};
             }));
  routes.Get("/api/v1/tasks/{task_id}", users([&front](Caller caller, Req req) -> UserAnswer {
               DET_ASSIGN_OR_RETURN(bus::TaskGetReply reply,
                                    front.calls.Call(caller, bus::TaskGetRequest{req.Match(1)}));
               return ordered_json{{"task", bus::ToJson(reply.task)}};
             }));
  routes.Post("/api/v1/tasks/{task_id}/kill", users([&front](Caller caller, Req req) -> UserAnswer {
                DET_ASSIGN_OR_RETURN(bus::TaskKillReply reply,
                                     front.calls.Call(caller, bus::TaskKillRequest{req.Match(1)}));
                if (reply.state.empty()) {
                  return ordered_json{{"array_tasks_stopped", reply.array_tasks_stopped}};
                }
                return ordered_json{{"state", reply.state}};
              }));
  routes.Get("/api/v1/tasks/{task_id}/logs", [&front](Req req, Response& res) {
    auto start = [&]() -> Status {
      DET_ASSIGN_OR_RETURN(auth::Principal caller, UserOf(front.calls.users(), req));
      DET_ASSIGN_OR_RETURN(bus::TaskLogsRequest request, LogsRequestOf(req));
      if (req.Param("follow") == "true") {
        // Unknown tasks are a 404 before the stream starts.
        DET_RETURN_IF_ERROR(
            front.calls.Call(caller, bus::TaskGetRequest{request.task_id}).status());
        res.Stream("application/x-ndjson",
                   std::make_shared<LogFollow>(front, caller, std::move(request)));
        return Status::Ok();
      }
      Result<bus::TaskLogsReply> read = front.reads.TaskLogs(caller, request);
      if (!read.ok() && read.status().code() == StatusCode::kNotFound) {
        // Known to the master but not stored yet: no lines so far.
        DET_RETURN_IF_ERROR(
            front.calls.Call(caller, bus::TaskGetRequest{request.task_id}).status());
        read = bus::TaskLogsReply{};
      }
      DET_ASSIGN_OR_RETURN(bus::TaskLogsReply reply, std::move(read));
      ordered_json logs = ordered_json::array();
      for (const auto& line : reply.lines) logs.push_back(bus::ToJson(line));
      Reply(res, UserAnswer(ordered_json{{"logs", logs}, {"task_ended", reply.task_ended}}));
      return Status::Ok();
    };
    if (Status started = start(); !started.ok()) Reply(res, started);
  });
}

}  // namespace

void CacheClusterAnswers(AnswerCache& cache, FrontDoor& front) {
  // Agents change with their own events and with the tasks placed on them; pools and the queue
  // with those and with the pending demand the registry publishes.
  const std::vector<std::string> kRegistryEvents = {"agent.", "task.", "cluster.", "pool."};
  const auth::Principal reader{0, "answer-cache", false};
  cache.Add(kAgentsAnswer, kRegistryEvents, [&front, reader]() -> Result<std::string> {
    DET_ASSIGN_OR_RETURN(bus::AgentList list, front.calls.Call(reader, bus::AgentListRequest{}));
    return AgentsJson(list).dump();
  });
  cache.Add(kPoolsAnswer, kRegistryEvents, [&front, reader]() -> Result<std::string> {
    DET_ASSIGN_OR_RETURN(bus::ResourcePoolList list, front.master.ResourcePools(reader));
    return PoolsJson(list).dump();
  });
  cache.Add(kJobsAnswer, kRegistryEvents, [&front, reader]() -> Result<std::string> {
    DET_ASSIGN_OR_RETURN(bus::JobList list, front.calls.Call(reader, bus::JobListRequest{}));
    return JobsJson(list).dump();
  });
}

void RouteClusterApi(Router& routes, FrontDoor& front, AnswerCache* cache) {
  RouteAgents(routes, front, cache);
  RouteJobs(routes, front, cache);
  RouteTasks(routes, front);
}

}  // namespace det::master::http
