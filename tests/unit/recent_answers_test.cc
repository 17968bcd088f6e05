// Answers many pollers share: one fetch per key and max age, whatever the number of callers;
// bounded by size; failures not kept.
#include "master/front/recent_answers.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace det::master {
namespace {

using namespace std::chrono_literals;

TEST(RecentAnswersTest, OneFetchPerKeyWithinMaxAgeThenAgain) {
  SimulatedClock clock;
  RecentAnswers answers(2s, 1 << 20, clock);
  int calls = 0;
  auto fetch = [&]() -> Result<std::string> { return "answer " + std::to_string(++calls); };
  EXPECT_EQ(**answers.Get("/a?x=1", fetch), "answer 1");
  clock.Advance(1900ms);
  EXPECT_EQ(**answers.Get("/a?x=1", fetch), "answer 1");
  EXPECT_EQ(**answers.Get("/a?x=2", fetch), "answer 2") << "another query is another answer";
  clock.Advance(200ms);
  EXPECT_EQ(**answers.Get("/a?x=1", fetch), "answer 3");
  EXPECT_EQ(answers.fetches(), 3);
}

TEST(RecentAnswersTest, AFailedFetchIsNotKept) {
  SimulatedClock clock;
  RecentAnswers answers(2s, 1 << 20, clock);
  auto failed = answers.Get("k", []() -> Result<std::string> { return Unavailable("down"); });
  EXPECT_FALSE(failed.ok());
  EXPECT_EQ(**answers.Get("k", []() -> Result<std::string> { return std::string("up"); }), "up");
  EXPECT_EQ(answers.bytes(), 2u);
}

TEST(RecentAnswersTest, ManyCallersAtOnceShareOneFetch) {
  RecentAnswers answers(10s, 1 << 20);
  std::atomic<int> calls{0};
  std::vector<std::thread> callers;
  std::atomic<int> right{0};
  for (int i = 0; i < 8; ++i) {
    callers.emplace_back([&] {
      auto got = answers.Get("k", [&]() -> Result<std::string> {
        ++calls;
        std::this_thread::sleep_for(50ms);
        return std::string("slow answer");
      });
      if (got.ok() && **got == "slow answer") ++right;
    });
  }
  for (auto& t : callers) t.join();
  EXPECT_EQ(calls.load(), 1);
  EXPECT_EQ(right.load(), 8);
}

TEST(RecentAnswersTest, TheLeastRecentlyFetchedGoWhenTheBytesRunOut) {
  SimulatedClock clock;
  RecentAnswers answers(1h, 25, clock);
  auto ten = [](char c) { return [c]() -> Result<std::string> { return std::string(10, c); }; };
  ASSERT_TRUE(answers.Get("a", ten('a')).ok());
  clock.Advance(1s);
  ASSERT_TRUE(answers.Get("b", ten('b')).ok());
  clock.Advance(1s);
  ASSERT_TRUE(answers.Get("c", ten('c')).ok());  // 30 bytes: "a" goes
  EXPECT_EQ(answers.bytes(), 20u);
  EXPECT_EQ(answers.fetches(), 3);
  ASSERT_TRUE(answers.Get("b", ten('x')).ok());
  ASSERT_TRUE(answers.Get("c", ten('x')).ok());
  EXPECT_EQ(answers.fetches(), 3) << "b and c are still held";
  EXPECT_EQ(**answers.Get("a", ten('z')), std::string(10, 'z')) << "a was dropped";
  // One answer larger than the bound is still given, and held alone.
  EXPECT_EQ(answers.Get("big", []() -> Result<std::string> { return std::string(100, 'b'); })
                .value()
                ->size(),
            100u);
  EXPECT_EQ(answers.bytes(), 100u);
}

}  // namespace
}  // namespace det::master
