// A flood of garbage at every port a running master binds leaves it answering valid requests.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <random>

#include "bus/catalog/channel.h"
#include "bus/catalog/master.h"
#include "bus/catalog/users.h"
#include "bus/rpc_client.h"
#include "master/master.h"
#include "tests/testing/postgres_fixture.h"

namespace det {
namespace {

using namespace std::chrono_literals;

master::MasterConfig LocalConfig() {
  master::MasterConfig config;
  config.bus.host = "127.0.0.1";
  config.bus.gateway_port = config.bus.agent_port = config.bus.event_subscribe_port =
      config.bus.event_publish_port = config.bus.snapshot_port = 0;
  config.port = 0;
  config.bus.security.plaintext = true;
  config.bus.max_message_bytes = 64 << 10;
  config.database.db = det::testing::PostgresEnvironment::Get()->FreshDatabase();
  config.security.initial_user_password = "hostile-test-password";
  return config;
}

int PortOf(const std::string& endpoint) {
  return std::stoi(endpoint.substr(endpoint.rfind(':') + 1));
}

// Raw bytes that are not even ZMTP.
void SendRawTcpGarbage(int port, std::mt19937& rng) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    std::string junk(4096, '\0');
    for (auto& c : junk) c = static_cast<char>(rng());
    (void)!::write(fd, junk.data(), junk.size());
  }
  ::close(fd);
}

// Well-formed ZMTP carrying malformed bus messages of every kind.
void SendMalformedFrames(zmq::context_t& context, zmq::socket_type type,
                         const std::string& endpoint, std::mt19937& rng) {
  zmq::socket_t socket = bus::MakeSocket(context, type);
  socket.connect(endpoint);
  std::vector<std::vector<std::string>> messages = {
      {"x"},                                                       // wrong part count
      {"agent.register", "\xc1", "\xc1"},                          // garbage msgpack
      {"agent.register", bus::Encode(bus::Header{}), "\x92\x01"},  // body not a map
      {"no.such.type", bus::Encode(bus::Header{}), bus::Encode(bus::ChannelHeartbeat{})},
      {"rpc.request", bus::Encode(bus::Header{}), bus::Encode(bus::AgentPing{"wrong type"})},
      {"", "", ""},
      {std::string(1000, 'a'), "b", "c", "d", "e", "f", "g", "h", "i", "j"},
      {"agent.register", bus::Encode(bus::Header{}), std::string(100 << 10, 'x')},  // > max size
  };
  for (int round = 0; round < 20; ++round) {
    for (const auto& parts : messages) {
      for (size_t i = 0; i < parts.size(); ++i) {
        std::string part = parts[i];
        if (round % 2 == 1 && !part.empty()) part[rng() % part.size()] = static_cast<char>(rng());
        auto flags = i + 1 < parts.size() ? zmq::send_flags::sndmore : zmq::send_flags::none;
        try {
          (void)socket.send(zmq::buffer(part), flags | zmq::send_flags::dontwait);
        } catch (const zmq::error_t&) {
          // The attacker's own socket refuses (a REQ expects a reply first): try the next one.
        }
      }
    }
  }
  std::this_thread::sleep_for(50ms);
}

TEST(HostileInputTest, GarbageAtEveryPortLeavesTheMasterServing) {
  master::Master master(LocalConfig(), RealClock::Instance());
  auto endpoints = master.Start();
  ASSERT_TRUE(endpoints.ok()) << endpoints.status().ToString();
  zmq::context_t context;
  std::mt19937 rng(42);
  const std::vector<std::pair<std::string, zmq::socket_type>> targets = {
      {endpoints->gateway, zmq::socket_type::req},
      {endpoints->gateway, zmq::socket_type::dealer},
      {endpoints->agent, zmq::socket_type::dealer},
      {endpoints->events.publish, zmq::socket_type::pub},
      {endpoints->events.subscribe, zmq::socket_type::xsub},
      {endpoints->events.snapshot, zmq::socket_type::dealer},
  };
  for (int wave = 0; wave < 3; ++wave) {
    for (const auto& [endpoint, type] : targets) {
      SendRawTcpGarbage(PortOf(endpoint), rng);
      SendMalformedFrames(context, type, endpoint, rng);
    }
  }
  bus::RpcClient client(context, endpoints->gateway, {}, bus::RpcClientConfig{2s, 2});
  auto info = client.Call<bus::MasterInfoRequest, bus::MasterInfo>({});
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  auto anonymous = client.Call<bus::AgentListRequest, bus::AgentList>({});
  EXPECT_EQ(anonymous.status().code(), StatusCode::kUnauthenticated);
  auto login =
      client.Call<bus::UserLoginRequest, bus::UserLoginReply>({"admin", "hostile-test-password"});
  ASSERT_TRUE(login.ok()) << login.status().ToString();
  auto agents = client.Call<bus::AgentListRequest, bus::AgentList>({}, login->token);
  ASSERT_TRUE(agents.ok()) << agents.status().ToString();
  EXPECT_TRUE(agents->agents.empty());  // no garbage registered as an agent
}

}  // namespace
}  // namespace det
