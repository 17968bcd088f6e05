// CURVE on TCP sockets: allow-listed clients talk, unknown keys cannot exchange one message.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>

#include "bus/catalog/agent.h"
#include "bus/rpc_client.h"
#include "bus/rpc_server.h"
#include "bus/security.h"
#include "bus/zap_handler.h"
#include "tests/testing/test_util.h"

namespace det::bus {
namespace {

using namespace std::chrono_literals;

class CurveTest : public ::testing::Test {
 protected:
  void SetUp() override { Start({}, ""); }
  // The client key has `client_roles`; the server socket admits `server_role` ("": any).
  // `open_roles`: the roles any key may take (the gateway's cli with cli_keys: any).
  void Start(const std::set<std::string>& client_roles, const std::string& server_role,
             const std::set<std::string>& open_roles = {}) {
    server_.reset();
    zap_.reset();  // one ZAP handler per context at a time
    server_keys_ = *GenerateCurveKeyPair();
    client_keys_ = *GenerateCurveKeyPair();
    zap_ = std::make_unique<ZapHandler>(
        context_, std::vector<AllowedClient>{{client_keys_.public_key, client_roles}}, open_roles);
    server_ = std::make_unique<RpcServer>(context_, "test", RealClock::Instance());
    server_->Handle<AgentPing, AgentEcho>(
        [this](const RpcContext& ctx, const AgentPing& p) -> Result<AgentEcho> {
          seen_keys_.push_back(ctx.client_key);  // on the test's thread: CallWith pumps there
          return AgentEcho{p.nonce};
        });
    SocketSecurity security{SocketSecurity::Mode::kCurveServer, server_keys_, "", {}};
    endpoint_ = *server_->Bind("tcp://127.0.0.1:0", security.WithRole(server_role));
  }

  // Pumps the server while `call` runs on another thread, until it returns. `timeout`: the
  // client's one attempt.
  Result<AgentEcho> CallWith(const SocketSecurity& security, Duration timeout = 300ms) {
    Result<AgentEcho> result = Internal("not called");
    std::atomic<bool> done{false};
    std::thread caller([&] {
      RpcClient client(context_, endpoint_, security, RpcClientConfig{timeout, 1});
      result = client.Call<AgentPing, AgentEcho>(AgentPing{"secret"});
      failure_ = client.handshake_failure();
      done = true;
    });
    while (!done) {
      zmq::pollitem_t item{server_->socket().handle(), 0, ZMQ_POLLIN, 0};
      Poll(&item, 1, 10ms);
      if (item.revents & ZMQ_POLLIN) server_->Receive();
    }
    caller.join();
    return result;
  }

  SocketSecurity ClientSecurity(const CurveKeyPair& own) {
    return {SocketSecurity::Mode::kCurveClient, own, server_keys_.public_key, {}};
  }

  zmq::context_t context_;
  CurveKeyPair server_keys_, client_keys_;
  std::unique_ptr<ZapHandler> zap_;
  std::unique_ptr<RpcServer> server_;
  std::string endpoint_;
  std::optional<HandshakeFailure> failure_;
  std::vector<std::string> seen_keys_;  // the client key of each call handled
};

// A client whose keys do not fit learns which way at once (the master's handshake), not after its
// timeout: each call below waits up to 30 s for a reply it cannot get.
constexpr Duration kLongTimeout = 30s;

TEST_F(CurveTest, APlaintextClientLearnsTheServerRequiresCurve) {
  auto echo = CallWith(SocketSecurity{}, kLongTimeout);
  ASSERT_EQ(echo.status().code(), StatusCode::kPermissionDenied) << echo.status().ToString();
  EXPECT_EQ(failure_, HandshakeFailure::kServerRequiresCurve);
  EXPECT_NE(echo.status().message().find("requires CURVE keys"), std::string::npos);
}

TEST_F(CurveTest, AClientWithTheWrongServerKeyLearnsItDoesNotMatch) {
  SocketSecurity wrong = ClientSecurity(client_keys_);
  wrong.server_public_key = GenerateCurveKeyPair()->public_key;
  auto echo = CallWith(wrong, kLongTimeout);
  ASSERT_EQ(echo.status().code(), StatusCode::kPermissionDenied) << echo.status().ToString();
  EXPECT_EQ(failure_, HandshakeFailure::kServerKeyMismatch);
}

TEST_F(CurveTest, AnUnknownClientKeyLearnsItIsRefused) {
  auto echo = CallWith(ClientSecurity(*GenerateCurveKeyPair()), kLongTimeout);
  ASSERT_EQ(echo.status().code(), StatusCode::kPermissionDenied) << echo.status().ToString();
  EXPECT_EQ(failure_, HandshakeFailure::kClientKeyRefused);
}

TEST_F(CurveTest, ACurveClientOfAPlaintextServerLearnsItIsPlaintext) {
  server_ = std::make_unique<RpcServer>(context_, "plain", RealClock::Instance());
  endpoint_ = *server_->Bind("tcp://127.0.0.1:0", SocketSecurity{});
  auto echo = CallWith(ClientSecurity(client_keys_), kLongTimeout);
  ASSERT_EQ(echo.status().code(), StatusCode::kPermissionDenied) << echo.status().ToString();
  EXPECT_EQ(failure_, HandshakeFailure::kServerIsPlaintext);
}

TEST_F(CurveTest, AClientWhoseKeysFitReportsNoHandshakeFailure) {
  ASSERT_TRUE(CallWith(ClientSecurity(client_keys_), kLongTimeout).ok());
  EXPECT_FALSE(failure_.has_value());
}

TEST_F(CurveTest, AllowListedClientExchangesMessages) {
  auto echo = CallWith(ClientSecurity(client_keys_), kLongTimeout);
  ASSERT_TRUE(echo.ok()) << echo.status().ToString();
  EXPECT_EQ(echo->nonce, "secret");
  EXPECT_EQ(zap_->admitted(), 1u);
}

TEST_F(CurveTest, UnknownKeyCannotExchangeASingleMessage) {
  auto echo = CallWith(ClientSecurity(*GenerateCurveKeyPair()));
  EXPECT_FALSE(echo.ok());
  EXPECT_EQ(server_->handled(), 0u);
  EXPECT_GE(zap_->denied(), 1u);
}

TEST_F(CurveTest, PlaintextClientIsRefused) {
  auto echo = CallWith(SocketSecurity{});
  EXPECT_FALSE(echo.ok());
  EXPECT_EQ(server_->handled(), 0u);
}

TEST_F(CurveTest, ClientWithWrongServerKeyCannotTalk) {
  SocketSecurity wrong = ClientSecurity(client_keys_);
  wrong.server_public_key = GenerateCurveKeyPair()->public_key;
  EXPECT_FALSE(CallWith(wrong).ok());
  EXPECT_EQ(server_->handled(), 0u);
}

class CurveRoleTest : public CurveTest {
 protected:
  void SetUp() override {}
};

TEST_F(CurveRoleTest, AKeyIsAdmittedOnThePortOfItsRole) {
  Start({kRoleAgent}, kRoleAgent);
  EXPECT_TRUE(CallWith(ClientSecurity(client_keys_), kLongTimeout).ok());
}

TEST_F(CurveRoleTest, AKeyIsRefusedOnAPortOfAnotherRole) {
  Start({kRoleCli}, kRoleAgent);  // a CLI user's key at the agent channel
  EXPECT_FALSE(CallWith(ClientSecurity(client_keys_)).ok());
  EXPECT_EQ(server_->handled(), 0u);
  EXPECT_GE(zap_->denied(), 1u);
}

TEST_F(CurveRoleTest, AKeyWithoutRolesMayUseEveryPort) {
  Start({}, kRoleAutoscaler);
  EXPECT_TRUE(CallWith(ClientSecurity(client_keys_), kLongTimeout).ok());
}

// bus.security.cli_keys: any: the gateway admits a key nobody listed (det made it itself; the
// login's token says who calls), but that key is still no agent and no autoscaler.
TEST_F(CurveRoleTest, AnyKeyMayUseTheOpenPort) {
  Start({kRoleAgent}, kRoleCli, {kRoleCli});
  auto echo = CallWith(ClientSecurity(*GenerateCurveKeyPair()), kLongTimeout);
  ASSERT_TRUE(echo.ok()) << echo.status().ToString();
  EXPECT_EQ(echo->nonce, "secret");
}

// What binds a login session to its client (master/auth/users.h): each call names the key its
// client proved in the handshake, whoever may use the port.
TEST_F(CurveRoleTest, EachCallCarriesTheKeyItsClientProved) {
  Start({kRoleCli}, kRoleCli, {kRoleCli});
  const CurveKeyPair unlisted = *GenerateCurveKeyPair();
  ASSERT_TRUE(CallWith(ClientSecurity(client_keys_), kLongTimeout).ok());
  ASSERT_TRUE(CallWith(ClientSecurity(unlisted), kLongTimeout).ok());
  EXPECT_EQ(seen_keys_, (std::vector{client_keys_.public_key, unlisted.public_key}));
}

class ClosedPortTest : public CurveRoleTest, public ::testing::WithParamInterface<std::string> {};

TEST_P(ClosedPortTest, AnUnlistedKeyIsRefusedThereAsUnknown) {
  Start({kRoleAgent, kRoleAutoscaler}, GetParam(), {kRoleCli});
  EXPECT_FALSE(CallWith(ClientSecurity(*GenerateCurveKeyPair()), kLongTimeout).ok());
  EXPECT_EQ(failure_, HandshakeFailure::kClientKeyRefused);
  EXPECT_EQ(server_->handled(), 0u);
  EXPECT_TRUE(CallWith(ClientSecurity(client_keys_), kLongTimeout).ok()) << "a listed key";
}

INSTANTIATE_TEST_SUITE_P(AgentAndEventBus, ClosedPortTest,
                         ::testing::Values(std::string(kRoleAgent), std::string(kRoleAutoscaler)));

TEST(SecurityConfigTest, TheGatewayAdmitsAnyKeyUnlessTheAllowListIsAsked) {
  const auto dir = std::filesystem::temp_directory_path() / ("det-cli-keys-" + RandomId());
  std::filesystem::create_directories(dir);
  const CurveKeyPair master = *GenerateCurveKeyPair();
  ASSERT_TRUE(WriteKeyPairFiles(master, (dir / "master").string()).ok());
  std::ofstream(dir / "allowed") << GenerateCurveKeyPair()->public_key << " agent\n";
  SecurityConfig config;
  config.key_file = (dir / "master.key").string();
  config.allowed_clients_file = (dir / "allowed").string();
  auto open = ResolveServerSecurity(config);
  ASSERT_TRUE(open.ok()) << open.status().ToString();
  EXPECT_EQ(open->open_roles, std::set<std::string>{kRoleCli});
  config.cli_keys = "allow_list";
  auto listed = ResolveServerSecurity(config);
  ASSERT_TRUE(listed.ok());
  EXPECT_TRUE(listed->open_roles.empty());
  std::filesystem::remove_all(dir);
}

TEST(AllowListTest, RolesFollowTheKeyAndUnknownOnesAreNamed) {
  auto dir = std::filesystem::temp_directory_path() / ("det-allow-" + RandomId());
  std::filesystem::create_directories(dir);
  const std::string a = GenerateCurveKeyPair()->public_key, b = GenerateCurveKeyPair()->public_key,
                    c = GenerateCurveKeyPair()->public_key;
  const std::string hashed = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]y#7";  // '#' is Z85 too
  std::ofstream(dir / "allowed") << "# the cluster's clients\n"
                                 << hashed << " cli\n"
                                 << a << " agent\n"
                                 << "public_key: \"" << b << "\" cli,autoscaler  # ops\n"
                                 << c << "\n";
  auto allow = ReadAllowList((dir / "allowed").string());
  ASSERT_TRUE(allow.ok()) << allow.status().ToString();
  EXPECT_EQ(
      *allow,
      (std::vector<AllowedClient>{
          {hashed, {kRoleCli}}, {a, {kRoleAgent}}, {b, {kRoleCli, kRoleAutoscaler}}, {c, {}}}));
  std::ofstream(dir / "bad") << a << " agent\n" << b << " admin\n";
  auto bad = ReadAllowList((dir / "bad").string());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("line 2: unknown role \"admin\""), std::string::npos)
      << bad.status().message();
  std::filesystem::remove_all(dir);
}

TEST(KeyFilesTest, WrittenKeysReadBackAndSecretFileIsPrivate) {
  auto dir = std::filesystem::temp_directory_path() / ("det-keys-" + RandomId());
  std::filesystem::create_directories(dir);
  auto keys = *GenerateCurveKeyPair();
  ASSERT_TRUE(WriteKeyPairFiles(keys, (dir / "agent").string()).ok());
  auto back = ReadKeyFile((dir / "agent.key").string());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->secret_key, keys.secret_key);
  auto pub = ReadKeyFile((dir / "agent.pub").string());
  EXPECT_EQ(pub->public_key, keys.public_key);
  EXPECT_TRUE(pub->secret_key.empty());
  auto perms = std::filesystem::status(dir / "agent.key").permissions();
  EXPECT_EQ(perms & std::filesystem::perms::others_read, std::filesystem::perms::none);
  auto allow = ReadAllowList((dir / "agent.pub").string());
  ASSERT_TRUE(allow.ok()) << allow.status().ToString();
  EXPECT_EQ(*allow, (std::vector<AllowedClient>{{keys.public_key, {}}}));
  std::filesystem::remove_all(dir);
}

TEST(SecurityConfigTest, CurveIsRequiredUnlessPlaintextIsExplicit) {
  SecurityConfig config;
  auto resolved = ResolveServerSecurity(config);
  ASSERT_FALSE(resolved.ok());
  EXPECT_NE(resolved.status().message().find("det keygen"), std::string::npos);
  config.plaintext = true;
  EXPECT_TRUE(ResolveServerSecurity(config).ok());
}

}  // namespace
}  // namespace det::bus
