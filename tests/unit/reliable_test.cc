#include "bus/reliable.h"

#include <gtest/gtest.h>

#include "bus/backoff.h"

namespace det::bus {
namespace {

TEST(DedupWindowTest, DeliversEachSequenceNumberOnce) {
  DedupWindow window;
  EXPECT_TRUE(window.Accept(7, 1));
  EXPECT_TRUE(window.Accept(7, 3));
  EXPECT_FALSE(window.Accept(7, 1));
  EXPECT_TRUE(window.Accept(7, 2));
  EXPECT_FALSE(window.Accept(7, 3));
  EXPECT_FALSE(window.Accept(7, 2));
}

TEST(DedupWindowTest, NewEpochStartsAFreshWindow) {
  DedupWindow window;
  EXPECT_TRUE(window.Accept(1, 1));
  EXPECT_TRUE(window.Accept(2, 1));  // the sender restarted and numbers from 1 again
}

TEST(OutboxTest, RetainsUntilAckedAndReplaysInOrder) {
  Outbox outbox;
  MonoTime t0{std::chrono::seconds(100)};
  for (int i = 0; i < 3; ++i) outbox.MarkSent(outbox.Add("t", std::to_string(i)).seq, t0);
  outbox.Ack(2);
  auto all = outbox.All();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0]->seq, 1u);
  EXPECT_EQ(all[1]->seq, 3u);
  EXPECT_TRUE(outbox.Due(t0 + std::chrono::seconds(1), std::chrono::seconds(5)).empty());
  EXPECT_EQ(outbox.Due(t0 + std::chrono::seconds(5), std::chrono::seconds(5)).size(), 2u);
}

TEST(BackoffTest, GrowsExponentiallyWithJitterUpToMax) {
  Backoff backoff({std::chrono::seconds(1), std::chrono::seconds(8), 2.0, 0.5}, 1234);
  const double expected_base[] = {1, 2, 4, 8, 8, 8};
  for (double base : expected_base) {
    double got = std::chrono::duration<double>(backoff.Next()).count();
    EXPECT_GE(got, base * 0.5);
    EXPECT_LE(got, base);
  }
  backoff.Reset();
  EXPECT_LE(std::chrono::duration<double>(backoff.Next()).count(), 1.0);
}

TEST(BackoffTest, JitterSpreadsClientsApart) {
  Backoff a({std::chrono::seconds(10)}, 1);
  Backoff b({std::chrono::seconds(10)}, 2);
  EXPECT_NE(a.Next(), b.Next());
}

}  // namespace
}  // namespace det::bus

namespace det::bus {
namespace {

TEST(OutboxTest, DropTypeForgetsOnlyThatType) {
  Outbox outbox;
  outbox.Add("workload.logs", "a");
  outbox.Add("workload.state", "b");
  outbox.Add("workload.logs", "c");
  EXPECT_EQ(outbox.DropType("workload.logs"), 2u);
  ASSERT_EQ(outbox.All().size(), 1u);
  EXPECT_EQ(outbox.All()[0]->type, "workload.state");
}

}  // namespace
}  // namespace det::bus
