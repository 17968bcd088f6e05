#include <gtest/gtest.h>

#include "tests/testing/postgres_fixture.h"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new det::testing::PostgresEnvironment);
  return RUN_ALL_TESTS();
}
