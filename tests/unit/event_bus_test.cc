// The event bus: broker + publisher + late subscriber (Clone pattern), over inproc and TCP.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include "bus/agent_channel.h"
#include "bus/catalog/agent.h"
#include "bus/event_broker.h"
#include "bus/event_publisher.h"
#include "bus/event_subscriber.h"
#include "bus/socket.h"
#include "tests/testing/test_util.h"

namespace det::bus {
namespace {

using namespace std::chrono_literals;

// A restarted master's port may still be held for a moment: the bind waits for it (a bind that
// gave up at once failed here with "Address already in use").
TEST(BindTest, APortHeldForAMomentIsBoundOnceFreed) {
  const int holder = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(holder, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(listen(holder, 1), 0);
  socklen_t length = sizeof address;
  getsockname(holder, reinterpret_cast<sockaddr*>(&address), &length);
  const std::string endpoint = "tcp://127.0.0.1:" + std::to_string(ntohs(address.sin_port));
  std::thread release([holder] {
    std::this_thread::sleep_for(600ms);
    close(holder);
  });
  zmq::context_t context;
  zmq::socket_t socket = MakeSocket(context, zmq::socket_type::pull);
  Result<std::string> bound = Bind(socket, endpoint, {});
  release.join();
  ASSERT_TRUE(bound.ok()) << bound.status().message();
  EXPECT_EQ(*bound, endpoint);
}
using Update = EventSubscriber::Update;

class EventBusTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    broker_ = std::make_unique<EventBroker>(context_, RealClock::Instance());
    auto endpoint = [&](const std::string& name) {
      return GetParam() == "tcp" ? std::string("tcp://127.0.0.1:0")
                                 : det::testing::InprocEndpoint(name);
    };
    auto bound = broker_->Bind({endpoint("pub"), endpoint("sub"), endpoint("snap")}, {});
    ASSERT_TRUE(bound.ok()) << bound.status().ToString();
    endpoints_ = *bound;
    broker_->Start();
    publisher_ = std::make_unique<EventPublisher>(context_, "registry", RealClock::Instance());
    ASSERT_TRUE(publisher_->Connect(endpoints_.publish, {}).ok());
    ASSERT_TRUE(publisher_->WaitReady(5s));
  }

  std::unique_ptr<EventSubscriber> Subscribe(std::vector<std::string> prefixes = {"agent."}) {
    auto sub = std::make_unique<EventSubscriber>(context_, "test", endpoints_, SocketSecurity{},
                                                 clock_, prefixes);
    EXPECT_TRUE(sub->Start().ok());
    return sub;
  }

  static void Pump(EventSubscriber& sub, std::vector<Update>* updates) {
    sub.Receive(updates);
    sub.Tick(updates);
  }

  static std::vector<std::string> AgentIds(const std::vector<Update>& updates) {
    std::vector<std::string> ids;
    for (const auto& u : updates) {
      if (u.kind == Update::Kind::kReset) ids.push_back("RESET");
      if (u.kind == Update::Kind::kEvent && u.event.type == AgentStateEvent::kType) {
        ids.push_back(u.event.Decode<AgentStateEvent>()->agent_id);
      }
    }
    return ids;
  }

  void PublishAgent(const std::string& id, bool tombstone = false) {
    ASSERT_TRUE(
        publisher_
            ->Publish(AgentStateEvent{id, "connected", "default", 1}, "agent/" + id, tombstone)
            .ok());
  }

  zmq::context_t context_;
  SimulatedClock clock_;  // the subscriber's timeouts; the broker runs on real time
  std::unique_ptr<EventBroker> broker_;
  EventBrokerEndpoints endpoints_;
  std::unique_ptr<EventPublisher> publisher_;
};

TEST_P(EventBusTest, LateSubscriberGetsSnapshotThenEveryLaterEventWithoutGap) {
  for (int i = 0; i < 5; ++i) PublishAgent("early" + std::to_string(i));
  PublishAgent("early0", /*tombstone=*/true);
  // Wait until the broker has recorded them (it forwards to nobody yet).
  ASSERT_TRUE(det::testing::PumpUntil([] {}, [&] { return broker_->forwarded() == 6; }));

  auto sub = Subscribe();
  std::vector<Update> updates;
  ASSERT_TRUE(
      det::testing::PumpUntil([&] { Pump(*sub, &updates); }, [&] { return sub->synced(); }));
  for (int i = 0; i < 50; ++i) PublishAgent("late" + std::to_string(i));
  ASSERT_TRUE(det::testing::PumpUntil([&] { Pump(*sub, &updates); },
                                      [&] { return AgentIds(updates).size() == 1 + 4 + 50; }));
  auto ids = AgentIds(updates);
  EXPECT_EQ(ids[0], "RESET");
  EXPECT_EQ((std::vector<std::string>(ids.begin() + 1, ids.begin() + 5)),
            (std::vector<std::string>{"early1", "early2", "early3", "early4"}));
  for (int i = 0; i < 50; ++i) EXPECT_EQ(ids[5 + i], "late" + std::to_string(i));
  EXPECT_EQ(sub->resyncs(), 0u);
}

TEST_P(EventBusTest, InjectedGapTriggersResync) {
  auto sub = Subscribe();
  std::vector<Update> updates;
  ASSERT_TRUE(
      det::testing::PumpUntil([&] { Pump(*sub, &updates); }, [&] { return sub->synced(); }));
  // A raw publisher that skips sequence number 2.
  zmq::socket_t raw = MakeSocket(context_, zmq::socket_type::xpub);
  ASSERT_TRUE(Connect(raw, endpoints_.publish, {}).ok());
  zmq::message_t subscription;
  ASSERT_TRUE(raw.recv(subscription));  // the broker's subscribe-all
  for (uint64_t seq : {1, 3}) {
    Header h = MakeHeader("gappy", 77, seq, clock_);
    h.key = "agent/g" + std::to_string(seq);
    ASSERT_TRUE(Send(raw, {}, h, AgentStateEvent{"g" + std::to_string(seq), "connected"}).ok());
  }
  ASSERT_TRUE(det::testing::PumpUntil([&] { Pump(*sub, &updates); },
                                      [&] { return sub->resyncs() == 1 && sub->synced(); }));
  // After the resync the view holds both retained events, delivered after a reset.
  auto ids = AgentIds(updates);
  auto reset = std::find(ids.begin() + 1, ids.end(), "RESET");
  ASSERT_NE(reset, ids.end());
  EXPECT_EQ((std::vector<std::string>(reset + 1, ids.end())),
            (std::vector<std::string>{"g1", "g3"}));
}

TEST_P(EventBusTest, SilentBrokerTriggersResync) {
  auto sub = Subscribe();
  std::vector<Update> updates;
  ASSERT_TRUE(
      det::testing::PumpUntil([&] { Pump(*sub, &updates); }, [&] { return sub->synced(); }));
  broker_->Stop();
  // A beacon sent just before the stop may still be on its way (over TCP it arrived after the
  // advance below once, and counted as fresh): take in what is in flight before time moves on.
  for (auto until = std::chrono::steady_clock::now() + 200ms;
       std::chrono::steady_clock::now() < until;) {
    Pump(*sub, &updates);
    std::this_thread::sleep_for(10ms);
  }
  ASSERT_EQ(sub->resyncs(), 0u);
  clock_.Advance(6s);
  Pump(*sub, &updates);
  EXPECT_EQ(sub->resyncs(), 1u);
  EXPECT_FALSE(sub->synced());
}

TEST_P(EventBusTest, PrefixFilterStillSeesGapFreeSeriesPerType) {
  auto sub = Subscribe({"agent."});
  std::vector<Update> updates;
  ASSERT_TRUE(
      det::testing::PumpUntil([&] { Pump(*sub, &updates); }, [&] { return sub->synced(); }));
  for (int i = 0; i < 10; ++i) {
    PublishAgent("a" + std::to_string(i));
    ASSERT_TRUE(publisher_->Publish(AgentPing{"other type, filtered out"}).ok());
  }
  ASSERT_TRUE(det::testing::PumpUntil([&] { Pump(*sub, &updates); },
                                      [&] { return AgentIds(updates).size() == 11; }));
  EXPECT_EQ(sub->resyncs(), 0u);
}

TEST_P(EventBusTest, MalformedEventIsDroppedNotForwarded) {
  zmq::socket_t raw = MakeSocket(context_, zmq::socket_type::xpub);
  ASSERT_TRUE(Connect(raw, endpoints_.publish, {}).ok());
  zmq::message_t subscription;
  ASSERT_TRUE(raw.recv(subscription));
  raw.send(zmq::str_buffer("agent.state"), zmq::send_flags::sndmore);
  raw.send(zmq::str_buffer("\xc1garbage"), zmq::send_flags::none);
  ASSERT_TRUE(det::testing::PumpUntil([] {}, [&] { return broker_->dropped() == 1; }));
  EXPECT_EQ(broker_->forwarded(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Transports, EventBusTest, ::testing::Values("inproc", "tcp"));

}  // namespace
}  // namespace det::bus
