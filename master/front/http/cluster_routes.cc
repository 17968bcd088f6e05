#include "master/front/http/cluster_routes.h"

#include <memory>
#include <thread>

#include "bus/catalog/cluster_json.h"
#include "common/clock.h"
#include "master/front/answer_cache.h"
#include "master/front/http/cluster_shapes.h"
#include "master/front/http/json.h"
#include "master/front/http/task_log_stream.h"
#include "master/front/http/user_routes.h"

namespace det::master::http {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;
using Caller = const auth::Principal&;
using Req = const Request&;

constexpr const char* kAgentsAnswer = "agents";
constexpr const char* kPoolsAnswer = "resource-pools";
constexpr const char* kJobsAnswer = "job-queues";

Result<bus::AgentSummary> FindAgent(FrontDoor& front, Caller caller, const std::string& id) {
  DET_ASSIGN_OR_RETURN(bus::AgentList list, front.calls.Call(caller, bus::AgentListRequest{}));
  for (auto& agent : list.agents) {
    if (agent.id == id) return agent;
  }
  return NotFound("agent \"" + id + "\" not found");
}

ordered_json SlotsJson(const bus::AgentSummary& agent) {
  ordered_json slots = ordered_json::array();
  for (const auto& slot : agent.slots) slots.push_back(SlotJson(agent, slot));
  return ordered_json{{"slots", slots}};
}

// The slot `slot_id` of `agent` as {"slot": v1Slot}; NotFound when the agent has none.
Result<ordered_json> OneSlotJson(const bus::AgentSummary& agent, const std::string& slot_id) {
  for (const auto& slot : agent.slots) {
    if (slot.id == slot_id) return ordered_json{{"slot", SlotJson(agent, slot)}};
  }
  return NotFound("agent \"" + agent.id + "\" has no slot \"" + slot_id + "\"");
}

// Determined's pagination of a whole list.
ordered_json WholeList(size_t size) { return PaginationJson(PageOf(0, 0, size)); }

}  // namespace

namespace {

// One of UpdateJobQueue's updates (Determined's v1QueueControl).
Result<bus::JobUpdateRequest> QueueControlOf(const json& control) {
  if (!control.is_object()) return InvalidArgument("expected an object with jobId");
  bus::JobUpdateRequest update;
  DET_ASSIGN_OR_RETURN(update.job_id, Field<std::string>(control, "jobId", "a job id"));
  for (const char* unsupported : {"aheadOf", "behindOf"}) {
    if (control.contains(unsupported) && !control[unsupported].is_null()) {
      return InvalidArgument(std::string(unsupported) +
                             ": jobs are not moved past each other here; the queue orders by "
                             "priority, then submission (change priority instead)");
    }
  }
  if (control.contains("priority") && !control["priority"].is_null()) {
    DET_ASSIGN_OR_RETURN(update.priority, Field<int32_t>(control, "priority", "1 to 99"));
  }
  if (control.contains("weight") && !control["weight"].is_null()) {
    DET_ASSIGN_OR_RETURN(update.weight, Field<double>(control, "weight", "a number"));
  }
  if (control.contains("resourcePool") && !control["resourcePool"].is_null()) {
    DET_ASSIGN_OR_RETURN(update.resource_pool,
                         Field<std::string>(control, "resourcePool", "a string"));
  }
  if (!update.priority && !update.weight && !update.resource_pool) {
    return InvalidArgument("nothing to change; give \"priority\", \"weight\" or \"resourcePool\"");
  }
  return update;
}

}  // namespace

Result<std::vector<bus::JobUpdateRequest>> JobQueueUpdatesOf(const std::string& text) {
  constexpr size_t kMaxUpdates = 1000;
  DET_ASSIGN_OR_RETURN(json body, ParseJsonObject(text));
  if (!body.contains("updates") || !body["updates"].is_array() || body["updates"].empty()) {
    return InvalidArgument(
        "updates: is required (a list of {jobId, priority, weight, resourcePool})");
  }
  if (body["updates"].size() > kMaxUpdates) {
    return InvalidArgument("updates: at most " + std::to_string(kMaxUpdates) + " at once");
  }
  std::vector<bus::JobUpdateRequest> updates;
  for (size_t i = 0; i < body["updates"].size(); ++i) {
    Result<bus::JobUpdateRequest> update = QueueControlOf(body["updates"][i]);
    if (!update.ok()) return update.status().WithContext("updates[" + std::to_string(i) + "]");
    updates.push_back(std::move(*update));
  }
  return updates;
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

ordered_json AgentsJson(const bus::AgentList& list) {
  ordered_json agents = ordered_json::array();
  for (const auto& agent : list.agents) agents.push_back(AgentJson(agent));
  return ordered_json{{"agents", agents}, {"pagination", WholeList(list.agents.size())}};
}

ordered_json PoolsJson(const bus::ResourcePoolList& list) {
  ordered_json pools = ordered_json::array();
  for (const auto& pool : list.pools) pools.push_back(ResourcePoolJson(pool));
  return ordered_json{{"resourcePools", pools}, {"pagination", WholeList(list.pools.size())}};
}

// GetJobs ({"jobs": [v1Job]}) or, `v2`, GetJobsV2 ({"jobs": [{"full": v1Job}]}).
ordered_json JobsJson(const bus::JobList& list, bool v2 = false) {
  ordered_json jobs = ordered_json::array();
  for (const auto& job : list.jobs) {
    jobs.push_back(v2 ? ordered_json{{"full", JobJson(job)}} : JobJson(job));
  }
  return ordered_json{{"jobs", jobs}, {"pagination", WholeList(list.jobs.size())}};
}

// GetTasks: the placed tasks by allocation id, and this master's task records beside them.
ordered_json TasksJson(const bus::TaskList& list) {
  ordered_json allocations = ordered_json::object();
  ordered_json tasks = ordered_json::array();
  for (const auto& task : list.tasks) {
    tasks.push_back(TaskJson(task));
    if (!task.allocation_id.empty() && task.state != "TERMINATED" && task.state != "QUEUED") {
      allocations[task.allocation_id] = AllocationSummaryJson(task);
    }
  }
  return ordered_json{{"allocationIdToSummary", allocations}, {"tasks", tasks}};
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
               return ordered_json{{"agent", AgentJson(agent)}};
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
                  DET_ASSIGN_OR_RETURN(bus::AgentReply reply, front.calls.Call(caller, request));
                  return ordered_json{{"agent", AgentJson(reply.agent)}};
                }));
    routes.Post(
        "/api/v1/agents/{agent_id}/slots/{slot_id}/" + action,
        users([&front, enable](Caller caller, Req req) -> UserAnswer {
          DET_ASSIGN_OR_RETURN(
              bus::AgentReply reply,
              front.calls.Call(caller, bus::SlotEnableRequest{req.Match(1), req.Match(2), enable}));
          return OneSlotJson(reply.agent, req.Match(2));
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
                front.calls.Call(caller, bus::JobListRequest{req.Param("resourcePool")}));
            return JobsJson(list);
          }));
  routes.Get("/api/v1/job-queues-v2", users([&front](Caller caller, Req req) -> UserAnswer {
               DET_ASSIGN_OR_RETURN(
                   bus::JobList list,
                   front.calls.Call(caller, bus::JobListRequest{req.Param("resourcePool")}));
               return JobsJson(list, /*v2=*/true);
             }));
  // Determined's UpdateJobQueue: the updates in order; the first that fails ends the call (those
  // before it are made) with its error, naming it.
  routes.Post("/api/v1/job-queues", users([&front](Caller caller, Req req) -> UserAnswer {
                DET_ASSIGN_OR_RETURN(std::vector<bus::JobUpdateRequest> updates,
                                     JobQueueUpdatesOf(req.body));
                for (size_t i = 0; i < updates.size(); ++i) {
                  Result<bus::JobUpdateReply> reply = front.calls.Call(caller, updates[i]);
                  if (!reply.ok()) {
                    return reply.status().WithContext("updates[" + std::to_string(i) + "] (job " +
                                                      updates[i].job_id + ")");
                  }
                }
                return ordered_json::object();
              }));
}

void RouteTasks(Router& routes, FrontDoor& front) {
  auto users = [&front](UserHandler handler) {
    return ForUsers(front.calls.users(), std::move(handler));
  };
  routes.Get("/api/v1/tasks", users([&front](Caller caller, Req req) -> UserAnswer {
               bus::TaskListRequest request;
               request.array_id = req.Param("arrayId");
               DET_ASSIGN_OR_RETURN(bus::TaskList list, front.calls.Call(caller, request));
               return TasksJson(list);
             }));
  routes.Get("/api/v1/tasks/{task_id}", users([&front](Caller caller, Req req) -> UserAnswer {
               DET_ASSIGN_OR_RETURN(bus::TaskGetReply reply,
                                    front.calls.Call(caller, bus::TaskGetRequest{req.Match(1)}));
               return ordered_json{{"task", TaskJson(reply.task)}};
             }));
  routes.Post("/api/v1/tasks/{task_id}/kill", users([&front](Caller caller, Req req) -> UserAnswer {
                DET_ASSIGN_OR_RETURN(bus::TaskKillReply reply,
                                     front.calls.Call(caller, bus::TaskKillRequest{req.Match(1)}));
                if (reply.state.empty()) {
                  return ordered_json{{"arrayTasksStopped", reply.array_tasks_stopped}};
                }
                return ordered_json{{"state", reply.state}};
              }));
  routes.Get("/api/v1/tasks/{task_id}/logs", [&front](Req req, Response& res) {
    auto start = [&]() -> Status {
      DET_ASSIGN_OR_RETURN(auth::Principal caller, UserOf(front.calls.users(), req));
      DET_ASSIGN_OR_RETURN(LogQuery query, LogQueryOf(req));
      const std::string& task = req.Match(1);
      // Unknown tasks are a 404 before the stream starts.
      DET_RETURN_IF_ERROR(front.calls.Call(caller, bus::TaskGetRequest{task}).status());
      LogSource source{[task]() -> Result<LogTasks> {
                         return LogTasks{{task}, true};
                       },
                       &TaskLogLineJson};
      res.Stream("application/x-ndjson",
                 LogStream(front, caller, std::move(query), std::move(source)));
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
