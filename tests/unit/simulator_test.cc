#include "autoscaler/simulator.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace det::autoscaler {
namespace {

using std::chrono::seconds;

SimulatedPool Pool(int slots, int max = 5) {
  SimulatedPool pool;
  pool.name = "gpu";
  pool.provider.type = "aws";
  pool.provider.slots_per_instance = slots;
  pool.provider.max_instances = max;
  return pool;
}

CloudModel FixedBoot() {
  CloudModel cloud;
  cloud.boot_time = seconds(60);
  cloud.boot_jitter = Duration::zero();
  cloud.price_per_hour = 3.6;  // a cent a second
  return cloud;
}

TEST(SimulatorTest, TwoJobsBootTwoInstancesThatStopAfterTheIdlePeriod) {
  const std::vector<TraceJob> trace = {{0, 600, 1, ""}, {0, 600, 1, ""}};
  auto report = Simulate(trace, {Pool(1)}, FixedBoot());
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report->finished, 2);
  EXPECT_EQ(report->launches, 2);
  EXPECT_NEAR(report->queue_p50_s, 60, 1);  // the boot
  // Each instance: 60 s booting + 600 s working + 300 s idle (max_idle_agent_period) + <= 1 s.
  EXPECT_NEAR(report->instance_hours, 2 * 960.0 / 3600, 2 * 2.0 / 3600);
  EXPECT_NEAR(report->idle_instance_hours, 2 * 300.0 / 3600, 2 * 2.0 / 3600);
  EXPECT_NEAR(report->cost, report->instance_hours * 3.6, 1e-9);
}

TEST(SimulatorTest, MaxInstancesMakesWorkWaitItsTurn) {
  const std::vector<TraceJob> trace = {{0, 600, 1, ""}, {0, 600, 1, ""}};
  auto report = Simulate(trace, {Pool(1, /*max=*/1)}, FixedBoot());
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->launches, 1);
  EXPECT_NEAR(report->queue_p99_s, 660, 1);  // boot, then the first job's 600 s
}

TEST(SimulatorTest, SpotCapacityErrorsFallBackToOnDemand) {
  SimulatedPool pool = Pool(1);
  pool.spot = true;
  pool.provider.spot_fallback = "on_demand";
  CloudModel cloud = FixedBoot();
  cloud.capacity_error_rate = 1.0;  // no spot at all
  auto report = Simulate({{0, 60, 1, ""}}, {pool}, cloud);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->finished, 1);
  EXPECT_EQ(report->capacity_errors, 1);
  EXPECT_LT(report->queue_p50_s, 62);  // on-demand within a second or so of the refusal
}

TEST(SimulatorTest, WorkThatCannotFitIsRefusedNamingTheJob) {
  auto report = Simulate({{0, 60, 1, ""}, {5, 60, 8, ""}}, {Pool(4)}, FixedBoot());
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().message(),
            "trace job 2: 8 slots do not fit on one instance of pool gpu (4 slots)");
  EXPECT_FALSE(Simulate({{0, 60, 1, "cpu"}}, {Pool(4)}, FixedBoot()).ok());
}

TEST(SimulatorTest, TraceErrorsNameTheLine) {
  const auto path = std::filesystem::temp_directory_path() / "det-trace-test.csv";
  std::ofstream(path) << "# comment\narrival_s,duration_s,slots\n0,60,1\n10,sixty,1\n";
  auto trace = LoadTrace(path.string());
  ASSERT_FALSE(trace.ok());
  EXPECT_EQ(trace.status().message(),
            path.string() + ":4: arrival_s and duration_s must be numbers, slots a whole number");
  std::ofstream(path) << "0,60,1\n30,120,2,gpu\n";
  trace = LoadTrace(path.string());
  ASSERT_TRUE(trace.ok());
  ASSERT_EQ(trace->size(), 2u);
  EXPECT_EQ((*trace)[1].pool, "gpu");
  EXPECT_EQ((*trace)[1].slots, 2);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace det::autoscaler
