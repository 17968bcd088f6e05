// Many trials' curves of one metric at once (storage/metrics_repo.h: ReadMetricSeries), against
// PostgreSQL: each of the three read paths (whole, cut from the points, from the rollups) gives the
// stored values at their steps, keeps the extremes, and stays within the bound.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "storage/ingest_writer.h"
#include "storage/metrics_repo.h"
#include "tests/testing/postgres_fixture.h"

namespace det::storage::series_test {
namespace {

using det::testing::PostgresEnvironment;

// A trial's loss at a step: a slow wave with a spike at step 778 of every trial.
double Loss(int64_t trial, int64_t step) {
  if (step == 778) return 1000.0 + static_cast<double>(trial);
  return std::sin(static_cast<double>(step) / 50.0) + static_cast<double>(trial);
}

void StoreTrial(IngestWriter& writer, int64_t trial, int64_t points) {
  std::vector<MetricPoint> batch;
  for (int64_t step = 1; step <= points; ++step) {
    // Every fifth point has no loss, every seventh a loss that is not a number.
    std::string metrics = R"({"accuracy": 0.5)";
    if (step % 5 != 0) {
      metrics += R"(, "loss": )" + (step % 7 == 0 ? std::string("\"NaN\"")
                                                  : nlohmann::json(Loss(trial, step)).dump());
    }
    batch.push_back({trial, "validation", step, 1, metrics + "}"});
  }
  ASSERT_TRUE(writer.WriteMetrics("trial" + std::to_string(trial), batch).ok());
}

bool HasLoss(int64_t step) { return step % 5 != 0 && step % 7 != 0; }

class MetricSeriesTest : public ::testing::Test {
 protected:
  void SetUp() override { db_ = PostgresEnvironment::Get()->MigratedDatabase(); }

  Result<std::vector<MetricSeries>> Read(const std::vector<int64_t>& trials, int max_points,
                                         std::vector<std::string> names = {"loss"}) {
    Database database(db_);
    std::vector<MetricSeries> series;
    Status status = database.Run([&](pqxx::work& tx) -> Status {
      DET_ASSIGN_OR_RETURN(series, ReadMetricSeries(tx, trials, "validation", names, max_points));
      return Status::Ok();
    });
    if (!status.ok()) return status;
    return series;
  }

  DbConfig db_;
};

TEST_F(MetricSeriesTest, EachPathGivesStoredValuesAtTheirStepsKeepingTheSpike) {
  IngestWriter writer(db_);
  StoreTrial(writer, 1, 100);    // whole: under max_points
  StoreTrial(writer, 2, 2500);   // cut from its points: under 16 x max_points
  StoreTrial(writer, 3, 20000);  // from the rollups
  // Trial 4 has no points; trial 5 is asked for twice.
  auto series = Read({3, 4, 1, 2, 5}, 200);
  ASSERT_TRUE(series.ok()) << series.status().ToString();
  ASSERT_EQ(series->size(), 3u);
  EXPECT_EQ((*series)[0].trial_id, 3) << "trials come back in the order asked";
  EXPECT_EQ((*series)[1].trial_id, 1);
  EXPECT_EQ((*series)[2].trial_id, 2);
  const std::map<int64_t, int64_t> points = {{1, 100}, {2, 2500}, {3, 20000}};
  for (const auto& s : *series) {
    SCOPED_TRACE("trial " + std::to_string(s.trial_id));
    EXPECT_EQ(s.name, "loss");
    ASSERT_EQ(s.steps.size(), s.values.size());
    EXPECT_EQ(s.downsampled, s.trial_id != 1);
    EXPECT_LE(s.steps.size(), 202u);
    for (size_t i = 0; i < s.steps.size(); ++i) {
      if (i > 0) {
        ASSERT_LT(s.steps[i - 1], s.steps[i]);
      }
      ASSERT_TRUE(HasLoss(s.steps[i])) << "step " << s.steps[i] << " has no numeric loss";
      ASSERT_DOUBLE_EQ(s.values[i], Loss(s.trial_id, s.steps[i])) << "step " << s.steps[i];
    }
    int64_t last = points.at(s.trial_id);
    while (!HasLoss(last)) --last;
    EXPECT_EQ(s.steps.front(), 1);
    if (s.trial_id == 3) {
      EXPECT_LE(s.steps.back(), last);  // the rollups' last range gives its extremes, wherever
    } else {
      EXPECT_EQ(s.steps.back(), last);
    }
    if (last >= 778) {
      EXPECT_NE(std::find(s.steps.begin(), s.steps.end(), 778), s.steps.end())
          << "the spike at step 778 was lost";
    }
  }
  // Every numeric loss of a short curve: 100 points less 20 without one and 14 that are not
  // numbers, 2 of them counted twice.
  EXPECT_EQ((*series)[1].steps.size(), 68u);
}

TEST_F(MetricSeriesTest, AWideSearchSharesThePointBudgetAndReadsTheRestFromTheRollups) {
  // 1,200 trials of 100 points: more rows than are read whole, more curves than get max_points.
  IngestWriter writer(db_);
  std::vector<int64_t> trials;
  std::vector<MetricPoint> batch;
  for (int64_t trial = 100; trial < 1300; ++trial) {
    trials.push_back(trial);
    for (int64_t step = 1; step <= 100; ++step) {
      batch.push_back({trial, "validation", step, 1,
                       R"({"loss": )" + nlohmann::json(Loss(trial, step)).dump() + "}"});
    }
  }
  ASSERT_TRUE(writer.WriteMetrics("wide", batch).ok());
  auto series = Read(trials, 300);
  ASSERT_TRUE(series.ok()) << series.status().ToString();
  ASSERT_EQ(series->size(), trials.size());
  size_t values = 0, whole = 0, coarse = 0;
  for (const auto& s : *series) {
    SCOPED_TRACE("trial " + std::to_string(s.trial_id));
    values += s.steps.size();
    coarse += s.steps.size() <= 10 ? 1 : 0;  // level 1's 4 buckets and the ends: the rollups
    whole += s.downsampled ? 0 : 1;
    ASSERT_LE(s.steps.size(), static_cast<size_t>(kSeriesMinCurvePoints) + 2);
    EXPECT_EQ(s.steps.front(), 1);
    EXPECT_EQ(s.steps.back(), 100) << "the last value is exact, from the rollups too";
    for (size_t i = 0; i < s.steps.size(); ++i) {
      if (i > 0) {
        ASSERT_LT(s.steps[i - 1], s.steps[i]);
      }
      ASSERT_DOUBLE_EQ(s.values[i], Loss(s.trial_id, s.steps[i])) << "step " << s.steps[i];
    }
  }
  EXPECT_LE(values, static_cast<size_t>(kSeriesPointBudget) + 2 * trials.size());
  EXPECT_EQ(whole, 0u) << "every curve is cut to its share";
  // The first kSeriesRawRows rows are read whole (200 trials), the other 1,000 trials from the
  // rollups.
  static_assert(kSeriesRawRows == 20000);
  EXPECT_EQ(coarse, 1000u);
}

TEST_F(MetricSeriesTest, NamesBoundsAndErrors) {
  IngestWriter writer(db_);
  StoreTrial(writer, 7, 30);
  auto both = Read({7}, 20000, {"accuracy", "loss", "missing"});
  ASSERT_TRUE(both.ok()) << both.status().ToString();
  ASSERT_EQ(both->size(), 2u);
  EXPECT_EQ((*both)[0].name, "accuracy");
  EXPECT_EQ((*both)[0].steps.size(), 30u);
  EXPECT_EQ((*both)[1].name, "loss");
  EXPECT_FALSE(Read({7}, 1).ok());
  EXPECT_FALSE(Read({7}, 20001).ok());
  auto none = Read({}, 200);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());

  Database database(db_);
  MetricNames names;
  ASSERT_TRUE(database
                  .Run([&](pqxx::work& tx) -> Status {
                    names = ReadMetricNames(tx, {7, 8});
                    return Status::Ok();
                  })
                  .ok());
  // The latest point (step 30) has no loss (30 % 5 == 0): only accuracy is offered.
  EXPECT_EQ(names, (MetricNames{{"validation", {"accuracy"}}}));
}

TEST(DownsampleToExtremesTest, KeepsEndsAndEachRangesLowAndHigh) {
  MetricSeries s{1, "loss", {}, {}, false};
  for (int64_t step = 0; step < 1000; ++step) {
    s.steps.push_back(step);
    s.values.push_back(step == 500 ? -9.0 : step == 501 ? 9.0 : 0.0);
  }
  DownsampleToExtremes(s, 10);
  EXPECT_TRUE(s.downsampled);
  EXPECT_LE(s.steps.size(), 12u);
  EXPECT_EQ(s.steps.front(), 0);
  EXPECT_EQ(s.steps.back(), 999);
  EXPECT_NE(std::find(s.steps.begin(), s.steps.end(), 500), s.steps.end());
  EXPECT_NE(std::find(s.steps.begin(), s.steps.end(), 501), s.steps.end());
  MetricSeries short_one{1, "loss", {1, 2}, {3, 4}, false};
  DownsampleToExtremes(short_one, 10);
  EXPECT_FALSE(short_one.downsampled);
  EXPECT_EQ(short_one.steps.size(), 2u);
}

}  // namespace
}  // namespace det::storage::series_test
