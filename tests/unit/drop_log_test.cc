#include "bus/drop_log.h"

#include <gtest/gtest.h>

namespace det::bus {
namespace {

TEST(DropLogTest, CountsEveryDropButLogsEachSenderAtMostOncePerInterval) {
  SimulatedClock clock;
  DropLog log("test", clock, std::chrono::seconds(10));
  for (int i = 0; i < 1000; ++i) log.Record("flooder", InvalidArgument("garbage"));
  EXPECT_EQ(log.total(), 1000u);
  EXPECT_EQ(log.logged(), 1u);
  log.Record("someone-else", InvalidArgument("garbage"));  // another sender is not silenced
  EXPECT_EQ(log.logged(), 2u);
  clock.Advance(std::chrono::seconds(10));
  log.Record("flooder", InvalidArgument("garbage"));  // the interval passed: one summary line
  EXPECT_EQ(log.logged(), 3u);
  EXPECT_EQ(log.total(), 1002u);
}

}  // namespace
}  // namespace det::bus
