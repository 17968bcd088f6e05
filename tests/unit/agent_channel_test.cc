// The agent channel over real sockets (inproc and TCP loopback), with protocol time driven by a
// SimulatedClock: nothing here sleeps to make time pass.
#include <gtest/gtest.h>

#include <algorithm>

#include "bus/agent_channel_client.h"
#include "bus/agent_channel_server.h"
#include "bus/catalog/agent.h"
#include "tests/testing/test_util.h"

namespace det::bus {
namespace {

using ServerEvent = AgentChannelServer::Event;
using ClientEvent = AgentChannelClient::Event;
using namespace std::chrono_literals;

AgentChannelConfig TestTiming() { return {1s, 5s, 25s, 5s}; }

class AgentChannelTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    server_ = std::make_unique<AgentChannelServer>(context_, "master", clock_, TestTiming());
    const std::string endpoint =
        GetParam() == "tcp" ? "tcp://127.0.0.1:0" : det::testing::InprocEndpoint("channel");
    auto bound = server_->Bind(endpoint, {});
    ASSERT_TRUE(bound.ok()) << bound.status().ToString();
    client_ = std::make_unique<AgentChannelClient>(
        context_, "agent-1", *bound, SocketSecurity{}, clock_, TestTiming(),
        BackoffPolicy{1s, 30s, 2.0, 0.5}, /*max_attempts=*/0);
    ASSERT_TRUE(client_->Start().ok());
  }

  void PumpServer() {
    server_->Receive(&server_events_);
    server_->Tick(&server_events_);
  }
  void PumpClient() {
    client_->Receive(&client_events_);
    client_->Tick(&client_events_);
  }
  void PumpBoth() {
    PumpServer();
    PumpClient();
  }
  bool ServerSaw(ServerEvent::Kind kind) {
    for (auto& e : server_events_)
      if (e.kind == kind) return true;
    return false;
  }
  bool ClientSaw(ClientEvent::Kind kind) {
    for (auto& e : client_events_)
      if (e.kind == kind) return true;
    return false;
  }
  std::vector<std::string> PingsDelivered() {
    std::vector<std::string> nonces;
    for (auto& e : client_events_) {
      if (e.kind == ClientEvent::Kind::kMessage && e.message.is(AgentPing::kType)) {
        nonces.push_back(e.message.Decode<AgentPing>()->nonce);
      }
    }
    return nonces;
  }
  void Connect() {
    ASSERT_TRUE(det::testing::PumpUntil([&] { PumpBoth(); },
                                        [&] { return ClientSaw(ClientEvent::Kind::kConnected); }));
    ASSERT_TRUE(ServerSaw(ServerEvent::Kind::kConnected));
  }

  zmq::context_t context_;
  SimulatedClock clock_;
  std::unique_ptr<AgentChannelServer> server_;
  std::unique_ptr<AgentChannelClient> client_;
  std::vector<ServerEvent> server_events_;
  std::vector<ClientEvent> client_events_;
};

TEST_P(AgentChannelTest, HelloIsWelcomedAndReliableMessagesArriveOnce) {
  Connect();
  client_->SendReliable(AgentRegister{"0.1.0", "default", "h", {}});
  ASSERT_TRUE(
      det::testing::PumpUntil([&] { PumpBoth(); }, [&] { return client_->unacknowledged() == 0; }));
  int registers = 0;
  for (auto& e : server_events_) {
    if (e.kind == ServerEvent::Kind::kMessage && e.message.is(AgentRegister::kType)) ++registers;
  }
  EXPECT_EQ(registers, 1);
}

size_t MessagesOf(const std::vector<ServerEvent>& events, std::string_view type) {
  return std::count_if(events.begin(), events.end(), [&](const ServerEvent& e) {
    return e.kind == ServerEvent::Kind::kMessage && e.message.is(type);
  });
}

// Acknowledgements are owed until the next message the other way (ahead of it, in the same
// burst) or a flush: a command and the reports it causes cross the link together.
TEST_P(AgentChannelTest, AcknowledgementsGoAheadOfTheNextMessageOrAtAFlush) {
  Connect();
  for (int i = 0; i < 3; ++i) client_->SendReliable(AgentRegister{"0.1.0", "default", "h", {}});
  ASSERT_TRUE(det::testing::PumpUntil(
      [&] { server_->Receive(&server_events_); },
      [&] { return MessagesOf(server_events_, AgentRegister::kType) == 3; }));
  // Received, not yet acknowledged: nothing has gone to the agent since.
  det::testing::PumpUntil([&] { client_->Receive(&client_events_); }, [] { return false; },
                          std::chrono::milliseconds(30));
  EXPECT_EQ(client_->unacknowledged(), 3u);
  // A command to the agent carries them ahead of itself.
  ASSERT_TRUE(server_->SendCommand("agent-1", AgentPing{"after-reports"}).ok());
  ASSERT_TRUE(det::testing::PumpUntil([&] { client_->Receive(&client_events_); },
                                      [&] { return PingsDelivered().size() == 1; }));
  EXPECT_EQ(client_->unacknowledged(), 0u);
  // The agent owes the ping's: its next report carries it, and the master's flush answers that.
  det::testing::PumpUntil([&] { server_->Receive(&server_events_); }, [] { return false; },
                          std::chrono::milliseconds(30));
  EXPECT_EQ(server_->Sessions()[0].unacknowledged, 1u);
  client_->SendReliable(AgentRegister{"0.1.0", "default", "h", {}});
  ASSERT_TRUE(det::testing::PumpUntil(
      [&] { server_->Receive(&server_events_); },
      [&] { return MessagesOf(server_events_, AgentRegister::kType) == 4; }));
  EXPECT_EQ(server_->Sessions()[0].unacknowledged, 0u);
  server_->FlushAcks();
  ASSERT_TRUE(det::testing::PumpUntil([&] { client_->Receive(&client_events_); },
                                      [&] { return client_->unacknowledged() == 0; }));
}

// However many reports one turn reads, the acknowledgements owed stay bounded: they go out in
// messages of at most 1,024 without waiting for the turn's end.
TEST_P(AgentChannelTest, AFloodIsAcknowledgedInBoundedMessagesBeforeTheTurnEnds) {
  Connect();
  constexpr size_t kReports = 1100;
  for (size_t i = 0; i < kReports; ++i) {
    client_->SendReliable(AgentRegister{"0.1.0", "default", "h", {}});
  }
  ASSERT_TRUE(det::testing::PumpUntil(
      [&] { server_->Receive(&server_events_); },
      [&] { return MessagesOf(server_events_, AgentRegister::kType) == kReports; }));
  ASSERT_TRUE(det::testing::PumpUntil([&] { client_->Receive(&client_events_); },
                                      [&] { return client_->unacknowledged() < kReports; }));
  EXPECT_EQ(client_->unacknowledged(), kReports - 1024);
  server_->FlushAcks();
  ASSERT_TRUE(det::testing::PumpUntil([&] { client_->Receive(&client_events_); },
                                      [&] { return client_->unacknowledged() == 0; }));
}

TEST_P(AgentChannelTest, AnAgentsOwnReconnectWindowReplacesTheChannels) {
  Connect();
  ASSERT_TRUE(server_->SetReconnectWindow("agent-1", 2s).ok());
  EXPECT_EQ(server_->SetReconnectWindow("nobody", 2s).code(), StatusCode::kNotFound);
  clock_.Advance(6s);
  PumpServer();
  EXPECT_TRUE(ServerSaw(ServerEvent::Kind::kLost));
  clock_.Advance(3s);  // past its own 2 s, well within the channel's 25 s
  PumpServer();
  EXPECT_TRUE(ServerSaw(ServerEvent::Kind::kExpired));
}

TEST_P(AgentChannelTest, SilentAgentIsLostThenExpiresAfterTheReconnectWindow) {
  Connect();
  clock_.Advance(6s);  // past the 5 s silence limit, without the client sending anything
  PumpServer();
  EXPECT_TRUE(ServerSaw(ServerEvent::Kind::kLost));
  EXPECT_FALSE(ServerSaw(ServerEvent::Kind::kExpired));
  clock_.Advance(25s);
  PumpServer();
  EXPECT_TRUE(ServerSaw(ServerEvent::Kind::kExpired));
  EXPECT_TRUE(server_->Sessions().empty());
}

TEST_P(AgentChannelTest, HeartbeatsKeepTheSessionAlive) {
  Connect();
  for (int i = 0; i < 20; ++i) {
    clock_.Advance(1s);
    PumpClient();  // sends a heartbeat
    ASSERT_TRUE(det::testing::PumpUntil([&] { PumpBoth(); },
                                        [&] {
                                          return server_->Sessions().size() == 1 &&
                                                 server_->Sessions()[0].last_heard == clock_.Now();
                                        }));
  }
  EXPECT_FALSE(ServerSaw(ServerEvent::Kind::kLost));
  EXPECT_FALSE(ClientSaw(ClientEvent::Kind::kDisconnected));
}

TEST_P(AgentChannelTest, ClientReconnectsWithBackoffAfterMasterSilence) {
  Connect();
  clock_.Advance(6s);  // the master answered nothing for longer than the silence limit
  PumpClient();
  ASSERT_TRUE(ClientSaw(ClientEvent::Kind::kDisconnected));
  EXPECT_EQ(client_->state(), AgentChannelClient::State::kWaitingToReconnect);
  EXPECT_EQ(client_->socket(), nullptr);
  clock_.Advance(400ms);  // below the smallest jittered first delay (0.5 s)
  PumpClient();
  EXPECT_EQ(client_->state(), AgentChannelClient::State::kWaitingToReconnect);
  clock_.Advance(1s);
  client_events_.clear();
  ASSERT_TRUE(det::testing::PumpUntil([&] { PumpBoth(); },
                                      [&] { return ClientSaw(ClientEvent::Kind::kConnected); }));
  EXPECT_EQ(client_->reconnects(), 1);
  EXPECT_TRUE(ServerSaw(ServerEvent::Kind::kReconnected));
}

TEST_P(AgentChannelTest, UnacknowledgedCommandsAreReplayedExactlyOnceAfterReconnect) {
  Connect();
  // The agent loses the master (its socket closes); the master has not noticed yet and sends.
  clock_.Advance(6s);
  PumpClient();
  ASSERT_EQ(client_->state(), AgentChannelClient::State::kWaitingToReconnect);
  ASSERT_TRUE(server_->SendCommand("agent-1", AgentPing{"c1"}).ok());
  ASSERT_TRUE(server_->SendCommand("agent-1", AgentPing{"c2"}).ok());
  clock_.Advance(2s);
  client_events_.clear();
  ASSERT_TRUE(
      det::testing::PumpUntil([&] { PumpBoth(); }, [&] { return PingsDelivered().size() >= 2; }));
  // Keep pumping through several resend periods: nothing may be delivered twice.
  for (int i = 0; i < 5; ++i) {
    clock_.Advance(1s);
    det::testing::PumpUntil([&] { PumpBoth(); }, [] { return false; }, 20ms);
  }
  EXPECT_EQ(PingsDelivered(), (std::vector<std::string>{"c1", "c2"}));
  EXPECT_EQ(server_->Sessions()[0].unacknowledged, 0u);
}

TEST_P(AgentChannelTest, ResentCommandWhoseAckWasLostIsNotDeliveredTwice) {
  Connect();
  ASSERT_TRUE(server_->SendCommand("agent-1", AgentPing{"once"}).ok());
  // The agent receives and acks, but the master does not read the ack before its resend timer.
  ASSERT_TRUE(
      det::testing::PumpUntil([&] { PumpClient(); }, [&] { return PingsDelivered().size() == 1; }));
  clock_.Advance(6s);
  server_->Tick(&server_events_);  // resends: the ack is still unread in its socket
  det::testing::PumpUntil([&] { PumpClient(); }, [] { return false; }, 100ms);
  EXPECT_EQ(PingsDelivered(), std::vector<std::string>{"once"});
}

// A restarted master is a new process on the same port: TCP only.
class AgentChannelTcpTest : public AgentChannelTest {};

TEST_P(AgentChannelTcpTest, AgentRejoinsAndReplaysItsUnackedMessagesAfterMasterRestart) {
  Connect();
  const std::string endpoint = server_->socket().get(zmq::sockopt::last_endpoint);
  server_.reset();  // the master dies
  client_->SendReliable(AgentEcho{"while-down"});
  server_ = std::make_unique<AgentChannelServer>(context_, "master", clock_, TestTiming());
  // ... and comes back on the same port, once libzmq's I/O thread has closed the old listener.
  ASSERT_TRUE(det::testing::PumpUntil([] {}, [&] { return server_->Bind(endpoint, {}).ok(); }));
  server_events_.clear();
  client_events_.clear();
  bool echoed = det::testing::PumpUntil(
      [&] {
        clock_.Advance(1s);  // heartbeats reach the new master, which asks for a hello
        PumpBoth();
      },
      [&] {
        for (auto& e : server_events_) {
          if (e.kind == ServerEvent::Kind::kMessage && e.message.is(AgentEcho::kType)) return true;
        }
        return false;
      });
  ASSERT_TRUE(echoed);
  EXPECT_TRUE(ServerSaw(ServerEvent::Kind::kConnected));
  ASSERT_FALSE(client_events_.empty());
  bool restarted_seen = false;
  for (auto& e : client_events_)
    restarted_seen |= e.kind == ClientEvent::Kind::kConnected && e.master_restarted;
  EXPECT_TRUE(restarted_seen);
}

// The owner re-sends log batches itself after a master restart, oldest first. A batch sent between
// the rejoin and the welcome must not reach the new master ahead of those.
TEST_P(AgentChannelTcpTest, NothingReachesARestartedMasterBetweenTheRejoinAndTheWelcome) {
  const std::string endpoint = server_->socket().get(zmq::sockopt::last_endpoint);
  // A client patient enough not to drop its socket while this test drives heartbeats.
  AgentChannelConfig patient = TestTiming();
  patient.silence_limit = std::chrono::hours(1);
  client_ = std::make_unique<AgentChannelClient>(context_, "agent-1", endpoint, SocketSecurity{},
                                                 clock_, patient, BackoffPolicy{}, 0);
  ASSERT_TRUE(client_->Start().ok());
  client_->ResendsOnMasterRestart(std::string(AgentEcho::kType));
  Connect();
  server_.reset();
  server_ = std::make_unique<AgentChannelServer>(context_, "master", clock_, TestTiming());
  ASSERT_TRUE(det::testing::PumpUntil([] {}, [&] { return server_->Bind(endpoint, {}).ok(); }));
  client_events_.clear();
  // Heartbeats reach the new master once libzmq has reconnected; it asks for a hello.
  ASSERT_TRUE(det::testing::PumpUntil(
      [&] {
        clock_.Advance(100ms);
        PumpBoth();
      },
      [&] { return client_->state() == AgentChannelClient::State::kJoining; }));
  client_->SendReliable(AgentEcho{"between-rejoin-and-welcome"});
  server_events_.clear();
  ASSERT_TRUE(det::testing::PumpUntil([&] { PumpBoth(); },
                                      [&] {
                                        for (auto& e : client_events_)
                                          if (e.kind == ClientEvent::Kind::kConnected &&
                                              e.master_restarted)
                                            return true;
                                        return false;
                                      }));
  for (int i = 0; i < 20; ++i) PumpBoth();
  for (auto& e : server_events_) {
    EXPECT_FALSE(e.kind == ServerEvent::Kind::kMessage && e.message.is(AgentEcho::kType))
        << "a message the owner re-sends itself reached the new master on its own";
  }
}

TEST_P(AgentChannelTest, GivesUpAfterMaxAttempts) {
  AgentChannelClient lonely(context_, "agent-2", "tcp://127.0.0.1:1", SocketSecurity{}, clock_,
                            TestTiming(), BackoffPolicy{1s, 2s, 2.0, 0.0}, /*max_attempts=*/2);
  ASSERT_TRUE(lonely.Start().ok());
  std::vector<ClientEvent> events;
  for (int i = 0; i < 10 && lonely.state() != AgentChannelClient::State::kGaveUp; ++i) {
    clock_.Advance(6s);
    lonely.Tick(&events);
  }
  EXPECT_EQ(lonely.state(), AgentChannelClient::State::kGaveUp);
}

INSTANTIATE_TEST_SUITE_P(Transports, AgentChannelTest, ::testing::Values("inproc", "tcp"));
INSTANTIATE_TEST_SUITE_P(Tcp, AgentChannelTcpTest, ::testing::Values("tcp"));

}  // namespace
}  // namespace det::bus
