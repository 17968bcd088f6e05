// The HTTP wing's answer cache: a polled list is fetched once and served from memory until an
// event of its kind says it changed or it is older than its max age; a failed fetch keeps the last
// answer.
#include "master/front/answer_cache.h"

#include <gtest/gtest.h>

#include <atomic>

#include "bus/catalog/agent.h"
#include "bus/event_broker.h"
#include "bus/event_publisher.h"
#include "tests/testing/test_util.h"

namespace det::master {
namespace {

using namespace std::chrono_literals;

class AnswerCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    broker_ = std::make_unique<bus::EventBroker>(context_, RealClock::Instance());
    auto bound =
        broker_->Bind({det::testing::InprocEndpoint("pub"), det::testing::InprocEndpoint("sub"),
                       det::testing::InprocEndpoint("snap")},
                      {});
    ASSERT_TRUE(bound.ok()) << bound.status().ToString();
    endpoints_ = *bound;
    broker_->Start();
    publisher_ = std::make_unique<bus::EventPublisher>(context_, "registry", RealClock::Instance());
    ASSERT_TRUE(publisher_->Connect(endpoints_.publish, {}).ok());
    ASSERT_TRUE(publisher_->WaitReady(5s));
  }
  // A cache with entry "agents" (made stale by agent.* events) counting its fetches.
  std::unique_ptr<AnswerCache> Cache(Duration max_age) {
    auto cache = std::make_unique<AnswerCache>(context_, endpoints_, max_age, age_);
    cache->Add("agents", {"agent."}, [this]() -> Result<std::string> {
      if (fail_) return Unavailable("the registry did not answer");
      return "answer " + std::to_string(++fetched_);
    });
    return cache;
  }
  // Starts it and waits until the events published from now on reach it.
  static void Follow(AnswerCache& cache) {
    cache.Start();
    ASSERT_TRUE(det::testing::WaitFor([&] { return cache.following(); }));
  }
  std::string Get(AnswerCache& cache) {
    auto json = cache.Get("agents");
    return json.ok() ? **json : json.status().message();
  }

  SimulatedClock age_;  // the answers' age; the event bus runs on real time
  zmq::context_t context_;
  std::unique_ptr<bus::EventBroker> broker_;
  bus::EventBrokerEndpoints endpoints_;
  std::unique_ptr<bus::EventPublisher> publisher_;
  std::atomic<int> fetched_{0};
  std::atomic<bool> fail_{false};
};

TEST_F(AnswerCacheTest, AListIsFetchedOnceUntilAnEventOfItsKindSaysItChanged) {
  auto cache = Cache(1h);
  Follow(*cache);
  EXPECT_EQ(Get(*cache), "answer 1");
  for (int i = 0; i < 100; ++i) EXPECT_EQ(Get(*cache), "answer 1");
  EXPECT_EQ(cache->fetches(), 1);
  ASSERT_TRUE(publisher_->Publish(bus::AgentStateEvent{}, "agent/a1").ok());
  EXPECT_TRUE(det::testing::WaitFor([&] { return Get(*cache) == "answer 2"; }))
      << "an agent.state event makes the agents stale";
  EXPECT_EQ(cache->fetches(), 2);
  EXPECT_EQ(cache->Get("nothing").status().code(), StatusCode::kNotFound);
}

// Once an event made every answer stale, the events after it are not read (no wakeup each) until
// an answer is fetched again; a change after that fetch still makes it stale.
TEST_F(AnswerCacheTest, EventsWaitWhileEveryAnswerIsStale) {
  auto cache = Cache(1h);
  Follow(*cache);
  EXPECT_EQ(Get(*cache), "answer 1");
  ASSERT_TRUE(publisher_->Publish(bus::AgentStateEvent{}, "agent/a1").ok());
  ASSERT_TRUE(det::testing::WaitFor([&] { return cache->events_read() >= 1; }));
  ASSERT_EQ(cache->events_read(), 1);
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(publisher_->Publish(bus::AgentStateEvent{}, "agent/a1").ok());
  }
  // A negative, so real time: they have had 300 ms to be read (they arrive in well under one).
  EXPECT_FALSE(det::testing::WaitFor([&] { return cache->events_read() > 1; }, 300ms))
      << "events were read while no answer could go stale";
  EXPECT_EQ(Get(*cache), "answer 2");
  EXPECT_TRUE(det::testing::WaitFor([&] { return cache->events_read() >= 51; }));
  EXPECT_EQ(cache->events_read(), 51) << "the waiting events are read once an answer is current";
  EXPECT_EQ(Get(*cache), "answer 3");  // those events came before answer 2's fetch: stale at worst
  ASSERT_TRUE(publisher_->Publish(bus::AgentStateEvent{}, "agent/a1").ok());
  EXPECT_TRUE(det::testing::WaitFor([&] { return Get(*cache) == "answer 4"; }))
      << "a change after the last fetch makes it stale";
}

TEST_F(AnswerCacheTest, WithoutEventsAnAnswerLivesItsMaxAge) {
  auto cache = Cache(100ms);  // not started: no events at all
  EXPECT_EQ(Get(*cache), "answer 1");
  EXPECT_EQ(Get(*cache), "answer 1");
  age_.Advance(99ms);
  EXPECT_EQ(Get(*cache), "answer 1");
  age_.Advance(1ms);
  EXPECT_EQ(Get(*cache), "answer 2");
}

TEST_F(AnswerCacheTest, AFailedFetchKeepsTheLastAnswerAndWithoutOneIsTheError) {
  auto cache = Cache(1ms);
  fail_ = true;
  EXPECT_EQ(Get(*cache), "the registry did not answer");
  fail_ = false;
  EXPECT_EQ(Get(*cache), "answer 1");
  fail_ = true;
  age_.Advance(5ms);
  EXPECT_EQ(Get(*cache), "answer 1");
}

}  // namespace
}  // namespace det::master
