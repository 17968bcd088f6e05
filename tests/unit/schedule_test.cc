#include "common/schedule.h"

#include <gtest/gtest.h>

namespace det {
namespace {

constexpr int64_t k20261126 = 1795651200;  // 2026-11-26T00:00:00Z, a Thursday

TEST(ScheduleTest, ADurationRunsEveryPeriodFromTheStart) {
  auto schedule = Schedule::Parse("24h");
  ASSERT_TRUE(schedule.ok());
  EXPECT_EQ(schedule->NextAfter(k20261126 + 10, k20261126), k20261126 + 86400);
  EXPECT_EQ(schedule->NextAfter(k20261126 + 86400, k20261126), k20261126 + 2 * 86400);
}

TEST(ScheduleTest, CronExpressionsRunAtTheirMinutesInUtc) {
  auto midnight = Schedule::Parse("0 0 * * *");
  ASSERT_TRUE(midnight.ok()) << midnight.status().ToString();
  EXPECT_EQ(midnight->NextAfter(k20261126, 0), k20261126 + 86400);
  EXPECT_EQ(midnight->NextAfter(k20261126 - 1, 0), k20261126);
  auto quarter = Schedule::Parse("*/15 * * * *");
  ASSERT_TRUE(quarter.ok());
  EXPECT_EQ(quarter->NextAfter(k20261126 + 60, 0), k20261126 + 900);
  auto mondays = Schedule::Parse("30 2 * * 1");  // 2026-11-30 is a Monday
  ASSERT_TRUE(mondays.ok());
  EXPECT_EQ(mondays->NextAfter(k20261126, 0), k20261126 + 4 * 86400 + 2 * 3600 + 30 * 60);
  auto sunday_as_seven = Schedule::Parse("0 0 * * 7");
  ASSERT_TRUE(sunday_as_seven.ok());
  EXPECT_EQ(sunday_as_seven->NextAfter(k20261126, 0), k20261126 + 3 * 86400);
  auto lists = Schedule::Parse("0 6,18 1-3 * *");
  ASSERT_TRUE(lists.ok());
  EXPECT_EQ(lists->NextAfter(k20261126, 0), k20261126 + 5 * 86400 + 6 * 3600);  // 1 December
}

TEST(ScheduleTest, WhatIsNeitherIsRefusedWithBothFormsNamed) {
  for (const char* bad :
       {"", "daily", "0 0 * *", "61 * * * *", "* 24 * * *", "*/0 * * * *", "5-1 * * * *", "0s"}) {
    auto parsed = Schedule::Parse(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
  }
  EXPECT_NE(Schedule::Parse("every day").status().message().find("cron expression"),
            std::string::npos);
}

}  // namespace
}  // namespace det
