#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include "tests/testing/postgres_fixture.h"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  // The in-process parts' routine messages would bury the failures; warnings and errors stay.
  spdlog::set_level(spdlog::level::warn);
  ::testing::AddGlobalTestEnvironment(new det::testing::PostgresEnvironment);
  return RUN_ALL_TESTS();
}
