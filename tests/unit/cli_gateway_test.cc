// The CLI gateway as an actor on its own thread, reached as det reaches it (REQ over the bus, the
// token in each request), with users in memory (tests/testing/in_memory_user_records.h) and a fake
// agent registry on the registry's inproc endpoint that counts what reaches it: no token or a dead
// one stops a call before any actor, an admin method is refused to a user, a command runs as its
// caller whatever the request says, a logout ends the session at once, the agent list is answered
// from the cache, and records out of reach are an error that names them.
#include "master/front/cli_gateway.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bus/rpc_client.h"
#include "bus/rpc_server.h"
#include "master/cluster/registry_endpoint.h"
#include "tests/testing/in_memory_user_records.h"
#include "tests/testing/test_util.h"

namespace det::master {
namespace {

using namespace std::chrono_literals;

// The agent registry's inproc endpoint, answering agent.list, agent.enable and command.run, and
// keeping every request that reached it.
class FakeRegistry {
 public:
  explicit FakeRegistry(zmq::context_t& context)
      : server_(context, "fake-registry", RealClock::Instance()) {
    server_.Handle<bus::AgentListRequest, bus::AgentList>(
        [this](const bus::RpcContext&, const bus::AgentListRequest&) -> Result<bus::AgentList> {
          ++calls_;
          bus::AgentList list;
          list.agents.push_back({.id = "agent-1"});
          return list;
        });
    server_.Handle<bus::AgentEnableRequest, bus::AgentReply>(
        [this](const bus::RpcContext&,
               const bus::AgentEnableRequest& r) -> Result<bus::AgentReply> {
          ++calls_;
          return bus::AgentReply{{.id = r.agent_id}};
        });
    server_.Handle<bus::CommandRunRequest, bus::CommandRunReply>(
        [this](const bus::RpcContext&,
               const bus::CommandRunRequest& r) -> Result<bus::CommandRunReply> {
          ++calls_;
          std::lock_guard lock(mu_);
          commands_.push_back(r);
          return bus::CommandRunReply{"task-1"};
        });
    EXPECT_TRUE(server_.Bind(kRegistryEndpoint, {}).ok());
    thread_ = std::thread([this] {
      while (!stop_) {
        zmq::pollitem_t item{server_.socket().handle(), 0, ZMQ_POLLIN, 0};
        bus::Poll(&item, 1, 20ms);
        if (item.revents & ZMQ_POLLIN) server_.Receive();
      }
    });
  }
  ~FakeRegistry() {
    stop_ = true;
    thread_.join();
  }
  int calls() const { return calls_.load(); }
  std::vector<bus::CommandRunRequest> commands() {
    std::lock_guard lock(mu_);
    return commands_;
  }

 private:
  bus::RpcServer server_;
  std::atomic<int> calls_{0};
  std::mutex mu_;
  std::vector<bus::CommandRunRequest> commands_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

class CliGatewayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(users_.Bootstrap("admin-password").ok());
    const auth::Principal admin{1, "admin", true};
    ASSERT_TRUE(users_.Create(admin, {.username = "alice", .password = "alice-password"}).ok());
    front_ = std::make_unique<FrontDoor>(context_, clock_, unused_database_, users_,
                                         bus::MasterInfo{"test"}, ResourcesConfig{}, 1 << 20);
    // No event bus: the cached lists age by time alone.
    gateway_ = std::make_unique<CliGateway>(
        context_, clock_, *front_, 1 << 20,
        bus::EventBrokerEndpoints{testing::InprocEndpoint("no-publish"),
                                  testing::InprocEndpoint("no-subscribe"),
                                  testing::InprocEndpoint("no-snapshot")});
    auto bound = gateway_->Bind(testing::InprocEndpoint("gateway"), {});
    ASSERT_TRUE(bound.ok()) << bound.status().ToString();
    endpoint_ = *bound;
    gateway_->Start();
  }
  void TearDown() override { gateway_->Stop(); }

  template <class Req, class Rep>
  Result<Rep> Call(const Req& request, const std::string& token) {
    bus::RpcClient client(context_, endpoint_, {}, {.timeout = 10s, .attempts = 1});
    return client.template Call<Req, Rep>(request, token);
  }
  std::string Login(const std::string& username, const std::string& password) {
    auto login = Call<bus::UserLoginRequest, bus::UserLoginReply>({username, password}, "");
    EXPECT_TRUE(login.ok()) << login.status().ToString();
    return login.ok() ? login->token : "";
  }
  Result<bus::AgentReply> DisableAgent(const std::string& token) {
    return Call<bus::AgentEnableRequest, bus::AgentReply>({"agent-1", false}, token);
  }

  zmq::context_t context_;
  SimulatedClock clock_;
  testing::InMemoryUserRecords records_;
  auth::Users users_{records_, clock_, {.password_iterations = 1000}};
  storage::Database unused_database_{storage::DbConfig{}};  // connects only when used
  FakeRegistry registry_{context_};
  std::unique_ptr<FrontDoor> front_;
  std::unique_ptr<CliGateway> gateway_;
  std::string endpoint_;
};

TEST_F(CliGatewayTest, WithoutALiveTokenNothingReachesAnActor) {
  for (const std::string& token : {std::string(), std::string("dets_forged"),
                                   std::string("deta_forged"), std::string("plain")}) {
    auto refused = DisableAgent(token);
    ASSERT_FALSE(refused.ok()) << "token \"" << token << "\"";
    EXPECT_EQ(refused.status().code(), StatusCode::kUnauthenticated) << refused.status().ToString();
  }
  EXPECT_EQ(registry_.calls(), 0);
}

TEST_F(CliGatewayTest, AnAdminMethodIsRefusedToAUserAndAnsweredForAnAdmin) {
  auto refused = DisableAgent(Login("alice", "alice-password"));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(refused.status().message().find("alice"), std::string::npos)
      << refused.status().message();
  EXPECT_EQ(registry_.calls(), 0) << "refused before the registry is asked";

  auto disabled = DisableAgent(Login("admin", "admin-password"));
  ASSERT_TRUE(disabled.ok()) << disabled.status().ToString();
  EXPECT_EQ(disabled->agent.id, "agent-1");
  EXPECT_EQ(registry_.calls(), 1);
}

TEST_F(CliGatewayTest, ACommandRunsAsItsCallerWhateverTheRequestSays) {
  const bus::AgentUserGroup alices{1001, 1001, "alice", "alice"};
  ASSERT_TRUE(
      users_.Update({1, "admin", true}, {.username = "alice", .agent_user_group = alices}).ok());
  bus::CommandRunRequest request{.entrypoint = {"true"}};
  request.owner = "admin";
  request.run_as = bus::AgentUserGroup{0, 0, "root", "root"};
  auto ran =
      Call<bus::CommandRunRequest, bus::CommandRunReply>(request, Login("alice", "alice-password"));
  ASSERT_TRUE(ran.ok()) << ran.status().ToString();
  const auto commands = registry_.commands();
  ASSERT_EQ(commands.size(), 1u);
  EXPECT_EQ(commands[0].owner, "alice");
  EXPECT_EQ(commands[0].run_as, alices);
}

TEST_F(CliGatewayTest, ALogoutEndsTheSessionAtOnce) {
  const std::string token = Login("admin", "admin-password");
  ASSERT_TRUE(DisableAgent(token).ok()) << "the session is remembered for a while";
  ASSERT_TRUE((Call<bus::UserLogoutRequest, bus::UserReply>({}, token).ok()));
  auto after = DisableAgent(token);
  ASSERT_FALSE(after.ok());
  EXPECT_EQ(after.status().code(), StatusCode::kUnauthenticated);
  EXPECT_EQ(registry_.calls(), 1);
}

TEST_F(CliGatewayTest, TheAgentListIsAnsweredFromTheCacheWithinASecond) {
  const std::string token = Login("alice", "alice-password");
  for (int i = 0; i < 5; ++i) {
    auto agents = Call<bus::AgentListRequest, bus::AgentList>({}, token);
    ASSERT_TRUE(agents.ok()) << agents.status().ToString();
    ASSERT_EQ(agents->agents.size(), 1u);
  }
  EXPECT_EQ(registry_.calls(), 1) << "one fetch for five lists";
  EXPECT_EQ((Call<bus::AgentListRequest, bus::AgentList>({}, "").status().code()),
            StatusCode::kUnauthenticated)
      << "a cached answer is still only for a logged-in caller";
}

TEST_F(CliGatewayTest, RecordsOutOfReachAreAnErrorThatSaysSo) {
  records_.SetReachable(false);
  auto login = Call<bus::UserLoginRequest, bus::UserLoginReply>({"alice", "alice-password"}, "");
  ASSERT_FALSE(login.ok());
  EXPECT_EQ(login.status().code(), StatusCode::kUnavailable) << login.status().ToString();
  EXPECT_NE(login.status().message().find("out of reach"), std::string::npos);
  records_.SetReachable(true);
  EXPECT_FALSE(Login("alice", "alice-password").empty()) << "and nothing is broken after";
}

}  // namespace
}  // namespace det::master
