// The master's rendezvous for distributed trials: everyone learns everyone once all arrived; a
// container that never arrives fails the allocation once, naming it.
#include "master/rendezvous.h"

#include <gtest/gtest.h>

#include <future>
#include <thread>

namespace det::master {
namespace {

using namespace std::chrono_literals;

TEST(RendezvousTest, EveryContainerLearnsAllAddressesByRankOnceTheLastArrives) {
  int failures = 0;
  Rendezvous rendezvous(10s, [&](const std::string&, const std::string&) { ++failures; });
  auto arrive = [&](int rank) {
    return std::async(std::launch::async, [&rendezvous, rank] {
      return rendezvous.Arrive("a.1", 3,
                               {rank, "10.0.0." + std::to_string(rank), rank == 0 ? 29500 : 0, 2});
    });
  };
  auto chief = arrive(0);
  auto last = arrive(2);
  EXPECT_EQ(chief.wait_for(100ms), std::future_status::timeout) << "rank 1 has not arrived";
  auto middle = arrive(1);
  for (auto* result : {&chief, &middle, &last}) {
    auto all = result->get();
    ASSERT_TRUE(all.ok()) << all.status().ToString();
    ASSERT_EQ(all->size(), 3u);
    EXPECT_EQ((*all)[0].address, "10.0.0.0");
    EXPECT_EQ((*all)[0].port, 29500);
    EXPECT_EQ((*all)[2].address, "10.0.0.2");
  }
  EXPECT_EQ(failures, 0);
  auto again = rendezvous.Arrive("a.1", 3, {1, "10.0.0.1", 0, 2});
  EXPECT_TRUE(again.ok()) << "a retried call gets the same answer at once";
}

TEST(RendezvousTest, AContainerThatNeverArrivesFailsTheAllocationOnceAfterTheTimeout) {
  std::vector<std::string> failed;
  std::mutex mu;
  Rendezvous rendezvous(300ms, [&](const std::string& allocation, const std::string& why) {
    std::lock_guard lock(mu);
    failed.push_back(allocation + ": " + why);
  });
  auto chief = std::async(std::launch::async, [&] {
    return rendezvous.Arrive("t.1", 3, {0, "10.0.0.1", 1, 1});
  });
  auto worker = std::async(std::launch::async, [&] {
    return rendezvous.Arrive("t.1", 3, {2, "10.0.0.3", 0, 1});
  });
  for (auto* result : {&chief, &worker}) {
    auto all = result->get();
    ASSERT_FALSE(all.ok());
    EXPECT_EQ(all.status().message(),
              "rendezvous of allocation t.1 timed out: container(s) 1 of 3 never arrived");
  }
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0],
            "t.1: rendezvous of allocation t.1 timed out: container(s) 1 of 3 never arrived");
  EXPECT_FALSE(rendezvous.Arrive("t.1", 3, {1, "10.0.0.2", 0, 1}).ok()) << "too late";
}

TEST(RendezvousTest, BadArrivalsAreRefusedNamingTheField) {
  Rendezvous rendezvous(50ms, [](const std::string&, const std::string&) {});
  EXPECT_EQ(rendezvous.Arrive("x.1", 2, {2, "10.0.0.1", 0, 1}).status().message(),
            "rank: 2 is not a container of 2");
  EXPECT_EQ(rendezvous.Arrive("x.1", 2, {0, "", 0, 1}).status().message(), "address: is required");
  ASSERT_TRUE(rendezvous.Arrive("x.1", 1, {0, "10.0.0.1", 0, 1}).ok()) << "one container";
  EXPECT_EQ(rendezvous.Arrive("x.1", 2, {1, "10.0.0.2", 0, 1}).status().message(),
            "num_containers: 2, but the allocation's first container said 1");
}

}  // namespace
}  // namespace det::master
