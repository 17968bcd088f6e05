#include "master/front/log_buffer.h"

#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

namespace det::master {
namespace {

TEST(LogBufferTest, KeepsTheLatestLinesWithGrowingIds) {
  auto buffer = std::make_shared<LogBuffer>(/*capacity=*/3);
  spdlog::logger logger("test", buffer);
  for (int i = 1; i <= 5; ++i) logger.info("line {}", i);
  logger.warn("careful");

  const auto lines = buffer->After(0, 100);
  ASSERT_EQ(lines.size(), 3u);  // the oldest three are gone
  EXPECT_EQ(lines[0].id, 4);
  EXPECT_EQ(lines[0].message, "line 4");
  EXPECT_EQ(lines[2].message, "careful");
  EXPECT_EQ(lines[2].level, "warning");
  EXPECT_GT(lines[2].timestamp, 0);

  const auto after = buffer->After(5, 100);
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after[0].id, 6);
  EXPECT_EQ(buffer->After(3, 1).size(), 1u);  // at most `limit`
  EXPECT_TRUE(buffer->After(6, 100).empty());
}

}  // namespace
}  // namespace det::master
