#include "master/front/cli_gateway.h"

#include "common/thread_name.h"

namespace det::master {

namespace {

// The registry's events that may change the agents, the pools or the job queue.
const std::vector<std::string> kRegistryEvents = {"agent.", "task.", "cluster.", "pool."};
constexpr Duration kAnswerMaxAge = std::chrono::seconds(1);

}  // namespace

CliGateway::CliGateway(zmq::context_t& context, const Clock& clock, FrontDoor& front,
                       int64_t max_message_bytes, bus::EventBrokerEndpoints events)
    : front_(front),
      answers_(context, std::move(events), kAnswerMaxAge),
      server_(context, "master", clock, bus::SocketLimits{.max_message_bytes = max_message_bytes}) {
  // A login hashes its password for a quarter second and the experiment service may take
  // seconds: methods run on threads of their own, so one caller's wait is not everyone's.
  server_.RunHandlersOn(kHandlerThreads);
  server_.Handle<bus::MasterInfoRequest, bus::MasterInfo>(
      [this](const bus::RpcContext&, const bus::MasterInfoRequest&) -> Result<bus::MasterInfo> {
        return front_.calls.info();
      });
  ServeCached<bus::AgentListRequest, bus::AgentList>(
      "agents", [this](const Principal& caller, const bus::AgentListRequest& request) {
        return front_.calls.Call(caller, request);
      });
  Forward<bus::AgentEnableRequest>();
  Forward<bus::SlotEnableRequest>();
  Forward<bus::CommandRunRequest>();
  Forward<bus::TaskListRequest>();
  Forward<bus::TaskGetRequest>();
  Forward<bus::TaskKillRequest>();
  ServeCached<bus::JobListRequest, bus::JobList>(
      "jobs", [this](const Principal& caller, const bus::JobListRequest& request) {
        return front_.calls.Call(caller, request);
      });
  Forward<bus::JobUpdateRequest>();
  Forward<bus::ExperimentCreateRequest>();
  Serve<bus::ExperimentListRequest, bus::ExperimentList>(
      [this](const Principal& caller,
             const bus::ExperimentListRequest& request) -> Result<bus::ExperimentList> {
        DET_ASSIGN_OR_RETURN(auto list, front_.calls.Call(caller, request));
        front_.reads.FillCheckpointTotals(list.experiments);
        return list;
      });
  Serve<bus::ExperimentGetRequest, bus::ExperimentGetReply>(
      [this](const Principal& caller,
             const bus::ExperimentGetRequest& request) -> Result<bus::ExperimentGetReply> {
        DET_ASSIGN_OR_RETURN(auto reply, front_.calls.Call(caller, request));
        front_.reads.FillCheckpointTotals({&reply.experiment, 1});
        return reply;
      });
  Forward<bus::ExperimentActionRequest>();
  Forward<bus::ExperimentContinueRequest>();
  Forward<bus::TrialGetRequest>();
  Forward<bus::TrialKillRequest>();
  Forward<bus::CheckpointDeleteRequest>();
  Serve<bus::TaskLogsRequest, bus::TaskLogsReply>(
      [this](const Principal& caller, const bus::TaskLogsRequest& request) {
        return front_.reads.TaskLogs(caller, request);
      });
  Serve<bus::TaskCleanupLogsRequest, bus::TaskCleanupLogsReply>(
      [this](const Principal& caller, const bus::TaskCleanupLogsRequest&) {
        return front_.master.CleanupLogs(caller);
      });
  Serve<bus::ExperimentCheckpointsRequest, bus::CheckpointList>(
      [this](const Principal& caller, const bus::ExperimentCheckpointsRequest& request) {
        return front_.reads.Checkpoints(caller, request);
      });
  ServeCached<bus::ResourcePoolListRequest, bus::ResourcePoolList>(
      "pools", [this](const Principal& caller, const bus::ResourcePoolListRequest&) {
        return front_.master.ResourcePools(caller);
      });
  Serve<bus::TrialMetricsRequest, bus::TrialMetricsReply>(
      [this](const Principal& caller, const bus::TrialMetricsRequest& request) {
        return front_.reads.TrialMetrics(caller, request);
      });
  Serve<bus::MasterLogsRequest, bus::MasterLogsReply>(
      [this](const Principal& caller, const bus::MasterLogsRequest& request) {
        return front_.master.MasterLogs(caller, request);
      });
  Serve<bus::InstanceListRequest, bus::InstanceList>(
      [this](const Principal& caller, const bus::InstanceListRequest& request) {
        return front_.reads.Instances(caller, request);
      });
  Serve<bus::ScalingDecisionListRequest, bus::ScalingDecisionList>(
      [this](const Principal& caller, const bus::ScalingDecisionListRequest& request) {
        return front_.reads.ScalingDecisions(caller, request);
      });
  HandleUserMethods();
}

void CliGateway::HandleUserMethods() {
  auth::Users& users = front_.calls.users();
  // A login hashes its password for about a quarter of a second, and any CURVE key may ask
  // (cli_keys: any): at most kLoginsAtOnce run at once, so logins cannot take every handler
  // thread from the calls of those logged in.
  server_.Handle<bus::UserLoginRequest, bus::UserLoginReply>(
      [&users, this](const bus::RpcContext& ctx,
                     const bus::UserLoginRequest& request) -> Result<bus::UserLoginReply> {
        if (logins_under_way_.fetch_add(1) >= kLoginsAtOnce) {
          --logins_under_way_;
          return Status(StatusCode::kResourceExhausted,
                        "too many logins at once; try again in a moment");
        }
        // The session is bound to the key it was asked for on (users.h).
        Result<bus::UserLoginReply> reply = users.Login(request, ctx.client_key);
        --logins_under_way_;
        return reply;
      });
  server_.Handle<bus::UserLogoutRequest, bus::UserReply>(
      [&users](const bus::RpcContext& ctx,
               const bus::UserLogoutRequest&) -> Result<bus::UserReply> {
        DET_ASSIGN_OR_RETURN(Principal caller, users.Authenticate(ctx.token, ctx.client_key));
        DET_RETURN_IF_ERROR(users.Logout(ctx.token));
        return bus::UserReply{{caller.user_id, caller.username, caller.admin, true, 0}};
      });
  Serve<bus::UserWhoamiRequest, bus::UserReply>(
      [&users](const Principal& caller, const bus::UserWhoamiRequest&) {
        return users.Whoami(caller);
      });
  Serve<bus::UserListRequest, bus::UserList>(
      [&users](const Principal& caller, const bus::UserListRequest&) {
        return users.List(caller);
      });
  Serve<bus::UserCreateRequest, bus::UserReply>(
      [&users](const Principal& caller, const bus::UserCreateRequest& request) {
        return users.Create(caller, request);
      });
  Serve<bus::UserPasswordRequest, bus::UserReply>(
      [&users](const Principal& caller, const bus::UserPasswordRequest& request) {
        return users.SetPassword(caller, request);
      });
  Serve<bus::UserUpdateRequest, bus::UserReply>(
      [&users](const Principal& caller, const bus::UserUpdateRequest& request) {
        return users.Update(caller, request);
      });
  Serve<bus::TokenCreateRequest, bus::TokenCreateReply>(
      [&users](const Principal& caller, const bus::TokenCreateRequest& request) {
        return users.CreateToken(caller, request);
      });
  Serve<bus::TokenListRequest, bus::TokenList>(
      [&users](const Principal& caller, const bus::TokenListRequest& request) {
        return users.ListTokens(caller, request);
      });
  Serve<bus::TokenPatchRequest, bus::TokenReply>(
      [&users](const Principal& caller, const bus::TokenPatchRequest& request) {
        return users.PatchToken(caller, request);
      });
}

template <class Req, class Rep>
void CliGateway::Serve(std::function<Result<Rep>(const Principal&, const Req&)> handler) {
  server_.Handle<Req, Rep>([this, handler = std::move(handler)](const bus::RpcContext& ctx,
                                                                const Req& request) -> Result<Rep> {
    DET_ASSIGN_OR_RETURN(Principal caller, front_.calls.Authenticate(ctx.token, ctx.client_key));
    return handler(caller, request);
  });
}

template <class Req>
void CliGateway::Forward() {
  Serve<Req, typename Forwarded<Req>::Reply>([this](const Principal& caller, const Req& request) {
    return front_.calls.Call(caller, request);
  });
}

template <class Req, class Rep>
void CliGateway::ServeCached(std::string key,
                             std::function<Result<Rep>(const Principal&, const Req&)> fetch) {
  // The cached answer is the same for every caller: fetched as a reader with no rights.
  const Principal reader{0, "answer-cache", false};
  answers_.Add(key, kRegistryEvents, [fetch, reader]() -> Result<std::string> {
    DET_ASSIGN_OR_RETURN(Rep reply, fetch(reader, Req{}));
    return bus::Encode(reply);
  });
  server_.HandleRaw(
      std::string(Req::kType),
      [this, key, fetch = std::move(fetch)](const bus::RpcContext& ctx,
                                            const bus::Bytes& params) -> Result<std::string> {
        Req request{};
        if (!params.data.empty()) {
          DET_RETURN_IF_ERROR(bus::DecodeInto(params.data, &request, Req::kType));
        }
        DET_ASSIGN_OR_RETURN(Principal caller,
                             front_.calls.Authenticate(ctx.token, ctx.client_key));
        if (request == Req{}) {
          DET_ASSIGN_OR_RETURN(AnswerCache::Json answer, answers_.Get(key));
          return *answer;
        }
        DET_ASSIGN_OR_RETURN(Rep reply, fetch(caller, request));
        return bus::Encode(reply);
      });
}

CliGateway::~CliGateway() { Stop(); }

Result<std::string> CliGateway::Bind(const std::string& endpoint,
                                     const bus::SocketSecurity& security) {
  return server_.Bind(endpoint, security);
}

void CliGateway::Start() {
  answers_.Start();
  stop_ = false;
  thread_ = std::thread([this] { Run(); });
}

void CliGateway::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  answers_.Stop();
}

void CliGateway::Run() {
  NameThisThread("cli-gateway");
  while (!stop_) {
    zmq::pollitem_t items[] = {{server_.socket().handle(), 0, ZMQ_POLLIN, 0},
                               {nullptr, server_.answers_fd(), ZMQ_POLLIN, 0}};
    bus::Poll(items, 2, std::chrono::milliseconds(100));
    if ((items[0].revents | items[1].revents) & ZMQ_POLLIN) server_.Receive();
  }
}

}  // namespace det::master
