#include "master/cli_gateway.h"

#include <algorithm>

#include "master/agent_registry.h"
#include "master/experiment_service.h"
#include "storage/tasks_repo.h"
#include "storage/telemetry_repo.h"

namespace det::master {

CliGateway::CliGateway(zmq::context_t& context, const Clock& clock, bus::MasterInfo info,
                       int64_t max_message_bytes, storage::Database& database, auth::Users& users)
    : info_(std::move(info)),
      database_(database),
      users_(users),
      server_(context, "master", clock, bus::SocketLimits{.max_message_bytes = max_message_bytes}),
      registry_(context, AgentRegistry::kQueryEndpoint, {},
                bus::RpcClientConfig{.timeout = std::chrono::seconds(2), .attempts = 1}),
      experiments_(context, ExperimentService::kEndpoint, {},
                   bus::RpcClientConfig{.timeout = std::chrono::seconds(30), .attempts = 1},
                   bus::SocketLimits{.max_message_bytes = max_message_bytes}) {
  server_.Handle<bus::MasterInfoRequest, bus::MasterInfo>(
      [this](const bus::RpcContext&, const bus::MasterInfoRequest&) -> Result<bus::MasterInfo> {
        return info_;
      });
  Forward<bus::AgentListRequest, bus::AgentList>(registry_);
  Forward<bus::AgentEnableRequest, bus::AgentReply>(registry_, Access::kAdmin);
  Forward<bus::SlotEnableRequest, bus::AgentReply>(registry_, Access::kAdmin);
  Forward<bus::CommandRunRequest, bus::CommandRunReply>(registry_);
  Forward<bus::TaskListRequest, bus::TaskList>(registry_);
  Forward<bus::TaskGetRequest, bus::TaskGetReply>(registry_);
  Forward<bus::TaskKillRequest, bus::TaskKillReply>(registry_);
  Forward<bus::JobListRequest, bus::JobList>(registry_);
  Forward<bus::JobUpdateRequest, bus::JobUpdateReply>(registry_);
  Forward<bus::ExperimentCreateRequest, bus::ExperimentCreateReply>(experiments_);
  Forward<bus::ExperimentListRequest, bus::ExperimentList>(experiments_);
  Forward<bus::ExperimentGetRequest, bus::ExperimentGetReply>(experiments_);
  Forward<bus::ExperimentActionRequest, bus::ExperimentActionReply>(experiments_);
  Forward<bus::TrialGetRequest, bus::TrialGetReply>(experiments_);
  Serve<bus::TaskLogsRequest, bus::TaskLogsReply>(
      Access::kUser, [this](const Principal&, const bus::TaskLogsRequest& request) {
        return ReadTaskLogs(request);
      });
  HandleUserMethods();
}

void CliGateway::HandleUserMethods() {
  server_.Handle<bus::UserLoginRequest, bus::UserLoginReply>(
      [this](const bus::RpcContext&, const bus::UserLoginRequest& request) {
        return users_.Login(request);
      });
  server_.Handle<bus::UserLogoutRequest, bus::UserReply>(
      [this](const bus::RpcContext& ctx, const bus::UserLogoutRequest&) -> Result<bus::UserReply> {
        DET_ASSIGN_OR_RETURN(Principal caller, users_.Authenticate(ctx.token));
        DET_RETURN_IF_ERROR(users_.Logout(ctx.token));
        return bus::UserReply{{caller.user_id, caller.username, caller.admin, true, 0}};
      });
  Serve<bus::UserWhoamiRequest, bus::UserReply>(
      Access::kUser, [this](const Principal& caller, const bus::UserWhoamiRequest&) {
        return users_.Whoami(caller);
      });
  Serve<bus::UserListRequest, bus::UserList>(
      Access::kUser,
      [this](const Principal& caller, const bus::UserListRequest&) { return users_.List(caller); });
  Serve<bus::UserCreateRequest, bus::UserReply>(
      Access::kUser, [this](const Principal& caller, const bus::UserCreateRequest& request) {
        return users_.Create(caller, request);
      });
  Serve<bus::UserPasswordRequest, bus::UserReply>(
      Access::kUser, [this](const Principal& caller, const bus::UserPasswordRequest& request) {
        return users_.SetPassword(caller, request);
      });
  Serve<bus::UserUpdateRequest, bus::UserReply>(
      Access::kUser, [this](const Principal& caller, const bus::UserUpdateRequest& request) {
        return users_.Update(caller, request);
      });
  Serve<bus::TokenCreateRequest, bus::TokenCreateReply>(
      Access::kUser, [this](const Principal& caller, const bus::TokenCreateRequest& request) {
        return users_.CreateToken(caller, request);
      });
  Serve<bus::TokenListRequest, bus::TokenList>(
      Access::kUser, [this](const Principal& caller, const bus::TokenListRequest& request) {
        return users_.ListTokens(caller, request);
      });
  Serve<bus::TokenRevokeRequest, bus::TokenReply>(
      Access::kUser, [this](const Principal& caller, const bus::TokenRevokeRequest& request) {
        return users_.RevokeToken(caller, request);
      });
}

template <class Req, class Rep>
void CliGateway::Serve(Access access,
                       std::function<Result<Rep>(const Principal&, const Req&)> handler) {
  server_.Handle<Req, Rep>([this, access, handler = std::move(handler)](
                               const bus::RpcContext& ctx, const Req& request) -> Result<Rep> {
    DET_ASSIGN_OR_RETURN(Principal caller, users_.Authenticate(ctx.token));
    if (access == Access::kAdmin && !caller.admin) {
      return PermissionDenied(std::string(Req::kType) + " is for admins only (you are \"" +
                              caller.username + "\")");
    }
    return handler(caller, request);
  });
}

template <class Req, class Rep>
void CliGateway::Forward(bus::RpcClient& to, Access access) {
  Serve<Req, Rep>(
      access, [&to](const Principal&, const Req& request) { return to.Call<Req, Rep>(request); });
}

Result<bus::TaskLogsReply> CliGateway::ReadTaskLogs(const bus::TaskLogsRequest& request) {
  bus::TaskLogsReply reply;
  const int limit = std::clamp(request.limit, 1, 10000);
  Status read = database_.Run([&](pqxx::work& tx) {
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

CliGateway::~CliGateway() { Stop(); }

Result<std::string> CliGateway::Bind(const std::string& endpoint,
                                     const bus::SocketSecurity& security) {
  return server_.Bind(endpoint, security);
}

void CliGateway::Start() {
  stop_ = false;
  thread_ = std::thread([this] { Run(); });
}

void CliGateway::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void CliGateway::Run() {
  while (!stop_) {
    zmq::pollitem_t item{server_.socket().handle(), 0, ZMQ_POLLIN, 0};
    bus::Poll(&item, 1, std::chrono::milliseconds(100));
    if (item.revents & ZMQ_POLLIN) server_.Receive();
  }
}

}  // namespace det::master
