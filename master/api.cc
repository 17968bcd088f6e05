#include "master/api.h"

#include <algorithm>

#include "master/agent_registry.h"
#include "master/experiment_service.h"
#include "storage/tasks_repo.h"
#include "storage/telemetry_repo.h"

namespace det::master {

Api::Api(zmq::context_t& context, storage::Database& database, auth::Users& users,
         bus::MasterInfo info, int64_t max_message_bytes)
    : context_(context),
      database_(database),
      users_(users),
      info_(std::move(info)),
      max_message_bytes_(max_message_bytes) {}

std::unique_ptr<bus::RpcClient> Api::TakeClient(Owner owner) {
  {
    std::lock_guard lock(mu_);
    auto& idle = idle_[static_cast<size_t>(owner)];
    if (!idle.empty()) {
      std::unique_ptr<bus::RpcClient> client = std::move(idle.back());
      idle.pop_back();
      return client;
    }
  }
  const bool registry = owner == Owner::kRegistry;
  // The registry answers from memory; the experiment service may wait on PostgreSQL.
  return std::make_unique<bus::RpcClient>(
      context_, registry ? AgentRegistry::kQueryEndpoint : ExperimentService::kEndpoint,
      bus::SocketSecurity{},
      bus::RpcClientConfig{.timeout = registry ? std::chrono::seconds(2) : std::chrono::seconds(30),
                           .attempts = 1},
      bus::SocketLimits{.max_message_bytes = max_message_bytes_});
}

void Api::GiveClient(Owner owner, std::unique_ptr<bus::RpcClient> client) {
  std::lock_guard lock(mu_);
  idle_[static_cast<size_t>(owner)].push_back(std::move(client));
}

Status Api::Allow(const auth::Principal& caller, Access access, std::string_view method) {
  if (access != Access::kAdmin || caller.admin) return Status::Ok();
  return PermissionDenied(std::string(method) + " is for admins only (you are \"" +
                          caller.username + "\")");
}

Result<bus::TaskLogsReply> Api::TaskLogs(const auth::Principal&,
                                         const bus::TaskLogsRequest& request) {
  bus::TaskLogsReply reply;
  const int limit = std::clamp(request.limit, 1, 10000);
  Status read = database_.Run([&](pqxx::work& tx) {
    reply.lines.clear();
    auto task = storage::GetTask(tx, request.task_id);
    if (!task.ok()) return task.status();
    // The end is stored after the task's last log batch (Store keeps order), so a task that has
    // ended has all its lines stored.
    reply.task_ended = task->end_ns.has_value();
    for (auto& stored : storage::ReadTaskLogs(tx, request.task_id, request.after_id, limit)) {
      reply.lines.push_back({stored.id, stored.line.timestamp_ns, std::move(stored.line.agent_id),
                             std::move(stored.line.stdtype), std::move(stored.line.log)});
    }
    return Status::Ok();
  });
  if (!read.ok()) return read;
  return reply;
}

}  // namespace det::master
