// The master's rendezvous for distributed trials: everyone learns everyone once all arrived; a
// container that never arrives fails the allocation once, naming it. No caller waits: answers come
// through callbacks, and time passes only through Tick.
#include "master/experiments/rendezvous.h"

#include <gtest/gtest.h>

#include <optional>

namespace det::master {
namespace {

using namespace std::chrono_literals;
using Arrivals = Result<std::vector<RendezvousArrival>>;

const Rendezvous::TimePoint kStart{};

// Arrives and keeps the answer, whenever it comes.
std::shared_ptr<std::optional<Arrivals>> Arrive(Rendezvous& rendezvous, const std::string& id,
                                                int n, RendezvousArrival arrival,
                                                Rendezvous::TimePoint now = kStart) {
  auto answer = std::make_shared<std::optional<Arrivals>>();
  rendezvous.Arrive(id, n, std::move(arrival), now, [answer](Arrivals a) { *answer = a; });
  return answer;
}

TEST(RendezvousTest, EveryContainerLearnsAllAddressesByRankOnceTheLastArrives) {
  int failures = 0;
  Rendezvous rendezvous(10s, [&](const std::string&, const std::string&) { ++failures; });
  auto chief = Arrive(rendezvous, "a.1", 3, {0, "10.0.0.0", 29500, 2});
  auto last = Arrive(rendezvous, "a.1", 3, {2, "10.0.0.2", 0, 2});
  EXPECT_FALSE(chief->has_value()) << "rank 1 has not arrived";
  auto middle = Arrive(rendezvous, "a.1", 3, {1, "10.0.0.1", 0, 2});
  for (const auto& answer : {chief, middle, last}) {
    ASSERT_TRUE(answer->has_value());
    const Arrivals& all = **answer;
    ASSERT_TRUE(all.ok()) << all.status().ToString();
    ASSERT_EQ(all->size(), 3u);
    EXPECT_EQ((*all)[0].address, "10.0.0.0");
    EXPECT_EQ((*all)[0].port, 29500);
    EXPECT_EQ((*all)[2].address, "10.0.0.2");
  }
  EXPECT_EQ(failures, 0);
  auto again = Arrive(rendezvous, "a.1", 3, {1, "10.0.0.1", 0, 2});
  ASSERT_TRUE(again->has_value() && (*again)->ok()) << "a retried call gets the answer at once";
}

TEST(RendezvousTest, AContainerThatNeverArrivesFailsTheAllocationOnceAfterTheTimeout) {
  std::vector<std::string> failed;
  Rendezvous rendezvous(300ms, [&](const std::string& allocation, const std::string& why) {
    failed.push_back(allocation + ": " + why);
  });
  auto chief = Arrive(rendezvous, "t.1", 3, {0, "10.0.0.1", 1, 1});
  auto worker = Arrive(rendezvous, "t.1", 3, {2, "10.0.0.3", 0, 1}, kStart + 100ms);
  rendezvous.Tick(kStart + 299ms);
  EXPECT_FALSE(chief->has_value()) << "not yet";
  rendezvous.Tick(kStart + 300ms);
  for (const auto& answer : {chief, worker}) {
    ASSERT_TRUE(answer->has_value());
    EXPECT_EQ((*answer)->status().message(),
              "rendezvous of allocation t.1 timed out: container(s) 1 of 3 never arrived");
  }
  rendezvous.Tick(kStart + 400ms);
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0],
            "t.1: rendezvous of allocation t.1 timed out: container(s) 1 of 3 never arrived");
  auto late = Arrive(rendezvous, "t.1", 3, {1, "10.0.0.2", 0, 1}, kStart + 500ms);
  ASSERT_TRUE(late->has_value());
  EXPECT_FALSE((*late)->ok()) << "too late";
}

TEST(RendezvousTest, AContainerArrivingAgainReplacesItsEarlierCall) {
  Rendezvous rendezvous(10s, [](const std::string&, const std::string&) {});
  auto first = Arrive(rendezvous, "r.1", 2, {0, "10.0.0.1", 1, 1});
  auto retried = Arrive(rendezvous, "r.1", 2, {0, "10.0.0.9", 1, 1});
  ASSERT_TRUE(first->has_value());
  EXPECT_EQ((*first)->status().code(), StatusCode::kFailedPrecondition);
  auto other = Arrive(rendezvous, "r.1", 2, {1, "10.0.0.2", 0, 1});
  ASSERT_TRUE(retried->has_value() && (*retried)->ok());
  EXPECT_EQ((**retried)->at(0).address, "10.0.0.9");
}

TEST(RendezvousTest, BadArrivalsAreRefusedNamingTheField) {
  Rendezvous rendezvous(50ms, [](const std::string&, const std::string&) {});
  EXPECT_EQ((*Arrive(rendezvous, "x.1", 2, {2, "10.0.0.1", 0, 1}))->status().message(),
            "rank: 2 is not a container of 2");
  EXPECT_EQ((*Arrive(rendezvous, "x.1", 2, {0, "", 0, 1}))->status().message(),
            "address: is required");
  ASSERT_TRUE((*Arrive(rendezvous, "x.1", 1, {0, "10.0.0.1", 0, 1}))->ok()) << "one container";
  EXPECT_EQ((*Arrive(rendezvous, "x.1", 2, {1, "10.0.0.2", 0, 1}))->status().message(),
            "num_containers: 2, but the allocation's first container said 1");
}

}  // namespace
}  // namespace det::master
