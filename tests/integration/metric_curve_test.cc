// The metric rollups (migration 0010) and the downsampled curve read over them.

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "storage/ingest_writer.h"
#include "storage/metrics_repo.h"
#include "tests/testing/postgres_fixture.h"

namespace det::storage::curve_test {
namespace {

using det::testing::PostgresEnvironment;

constexpr int64_t kTrial = 41;
constexpr int64_t kPeakStep = 123457;
constexpr int64_t kDipStep = 54321;

int64_t Scalar(const DbConfig& db, const std::string& sql) {
  auto connection = Connect(db);
  pqxx::nontransaction tx(**connection);
  return tx.exec1(sql)[0].as<int64_t>();
}

std::string Text(const DbConfig& db, const std::string& sql) {
  auto connection = Connect(db);
  pqxx::nontransaction tx(**connection);
  return tx.exec1(sql)[0].as<std::string>();
}

// A wavy loss with one peak and one dip, and an accuracy that is sometimes not a number.
MetricPoint Point(int64_t step) {
  double loss = 1.0 + std::sin(static_cast<double>(step) / 1000.0);
  if (step == kPeakStep) loss = 1000;
  if (step == kDipStep) loss = -1000;
  const std::string accuracy = step % 7 == 0 ? "\"n/a\"" : std::to_string(step % 100);
  return {kTrial, "training", step, 0,
          R"({"loss": )" + std::to_string(loss) + R"(, "accuracy": )" + accuracy + "}"};
}

std::vector<MetricPoint> Points(int64_t first, int64_t count) {
  std::vector<MetricPoint> points;
  for (int64_t step = first; step < first + count; ++step) points.push_back(Point(step));
  return points;
}

// Stores steps [0, n) in batches through every write path: COPY, a batch that overlaps stored
// steps (row by row), and single Core API reports (one sent twice).
void StoreCurve(const DbConfig& db, int64_t n) {
  IngestWriter writer(db);
  for (int64_t first = 0; first < n - 100; first += 10000) {
    ASSERT_TRUE(writer
                    .WriteMetrics("b" + std::to_string(first),
                                  Points(first, std::min<int64_t>(10000, n - 100 - first)))
                    .ok());
  }
  ASSERT_TRUE(writer.WriteMetrics("overlap", Points(n - 150, 100)).ok());  // 50 already stored
  Database database(db);
  for (int64_t step = n - 50; step < n; ++step) {
    for (int times = 0; times < 2; ++times) {
      ASSERT_TRUE(database
                      .Run([&](pqxx::work& tx) -> Status {
                        RecordMetric(tx, Point(step));
                        return Status::Ok();
                      })
                      .ok());
    }
  }
}

class MetricCurveTest : public ::testing::Test {
 protected:
  void SetUp() override { db_ = PostgresEnvironment::Get()->MigratedDatabase(); }

  Result<MetricCurve> Read(int64_t after_step, int max_points) {
    Database database(db_);
    MetricCurve curve;
    Status status = database.Run([&](pqxx::work& tx) -> Status {
      DET_ASSIGN_OR_RETURN(curve, ReadMetricCurve(tx, kTrial, "training", after_step, max_points));
      return Status::Ok();
    });
    if (!status.ok()) return status;
    return curve;
  }

  DbConfig db_;
};

TEST_F(MetricCurveTest, RollupsHoldEachBucketsExtremesAndCountsWhateverTheWritePath) {
  constexpr int64_t kPoints = 40000;
  StoreCurve(db_, kPoints);
  ASSERT_EQ(Scalar(db_, "SELECT count(*) FROM metrics"), kPoints);
  // Points stored before migration 0010 (straight into the table), folded as it folds them.
  Scalar(db_,
         "WITH copied AS (INSERT INTO metrics (trial_id, kind, step, metrics) SELECT 42, kind, "
         "step, metrics FROM metrics WHERE trial_id = 41 AND step < 5000 RETURNING 0)"
         " SELECT count(*) FROM copied");
  Scalar(db_,
         "SELECT count(det_fold_metrics(42, 'training', steps)) FROM"
         " (SELECT array_agg(step) AS steps FROM metrics WHERE trial_id = 42) AS s");
  for (int level = 1; level <= 4; ++level) {
    const std::string l = std::to_string(level);
    EXPECT_EQ(Scalar(db_, "SELECT sum(points)::bigint FROM metric_rollups WHERE level = " + l),
              kPoints + 5000)
        << "level " << l;
    // Every bucket's extremes against the points themselves.
    for (const std::string metric : {"loss", "accuracy"}) {
      const std::string value = "(metrics->>'" + metric + "')::numeric";
      const std::string truth = "SELECT trial_id, step >> (5 * " + l + ") AS bucket, min(" + value +
                                ") AS low, max(" + value +
                                ") AS high FROM metrics WHERE jsonb_typeof(metrics->'" + metric +
                                "') = 'number' GROUP BY 1, 2";
      EXPECT_EQ(Text(db_,
                     "SELECT coalesce(string_agg(r.bucket || ': ' || r.extremes::text || ' vs "
                     "' || t.low || '..' || t.high, '; '), '') FROM metric_rollups r JOIN (" +
                         truth + ") t USING (trial_id, bucket) WHERE r.level = " + l +
                         " AND ((r.extremes->'" + metric +
                         "'->>1)::numeric <> t.low OR "
                         "(r.extremes->'" +
                         metric + "'->>3)::numeric <> t.high)"),
                "")
          << metric << " at level " << l;
    }
  }
}

TEST_F(MetricCurveTest, ALongCurveComesBackAsItsExtremesWithinTheBound) {
  constexpr int64_t kPoints = 200000;
  StoreCurve(db_, kPoints);
  auto curve = Read(-1, 2000);
  ASSERT_TRUE(curve.ok()) << curve.status().ToString();
  EXPECT_TRUE(curve->downsampled);
  int losses = 0;
  bool peak = false, dip = false;
  for (size_t i = 0; i < curve->points.size(); ++i) {
    const auto& p = curve->points[i];
    if (i > 0) {
      ASSERT_LT(curve->points[i - 1].step, p.step);
    }
    const auto metrics = nlohmann::json::parse(p.metrics_json);
    if (!metrics.contains("loss")) continue;
    ++losses;
    EXPECT_DOUBLE_EQ(metrics["loss"].get<double>(),
                     nlohmann::json::parse(Point(p.step).metrics_json)["loss"].get<double>())
        << "step " << p.step << " carries another step's value";
    peak |= p.step == kPeakStep && metrics["loss"] == 1000;
    dip |= p.step == kDipStep && metrics["loss"] == -1000;
  }
  EXPECT_TRUE(peak) << "the peak was lost";
  EXPECT_TRUE(dip) << "the dip was lost";
  EXPECT_LE(losses, 2002);
  EXPECT_GE(losses, 1000);  // every range has a loss
  EXPECT_EQ(curve->points.front().step, 0);
  EXPECT_EQ(curve->points.back().step, kPoints - 1);
  EXPECT_EQ(nlohmann::json::parse(curve->points.back().metrics_json),
            nlohmann::json::parse(Point(kPoints - 1).metrics_json));

  // After a step: only later points; a short rest comes back whole.
  auto later = Read(kPeakStep - 1, 2000);
  ASSERT_TRUE(later.ok());
  EXPECT_TRUE(later->downsampled);
  EXPECT_EQ(later->points.front().step, kPeakStep);
  for (const auto& p : later->points) EXPECT_GT(p.step, kPeakStep - 1);
  auto rest = Read(kPoints - 1001, 2000);
  ASSERT_TRUE(rest.ok());
  EXPECT_FALSE(rest->downsampled);
  EXPECT_EQ(rest->points.size(), 1000u);
}

TEST_F(MetricCurveTest, AMidSizedCurveIsCutFromItsPoints) {
  StoreCurve(db_, 70000);  // from step 54321 (the dip): 15,679 points, under 16 x 2,000
  auto curve = Read(kDipStep - 1, 2000);
  ASSERT_TRUE(curve.ok()) << curve.status().ToString();
  EXPECT_TRUE(curve->downsampled);
  int losses = 0;
  for (const auto& p : curve->points) {
    const auto metrics = nlohmann::json::parse(p.metrics_json);
    if (!metrics.contains("loss")) continue;
    ++losses;
    EXPECT_EQ(metrics["loss"], nlohmann::json::parse(Point(p.step).metrics_json)["loss"]) << p.step;
  }
  // Every range holds points, so each gives its lowest and highest loss (one value when they are
  // the same point); the first point is the dip.
  EXPECT_GE(losses, 1500);
  EXPECT_LE(losses, 2002);
  EXPECT_EQ(curve->points.front().step, kDipStep);
}

}  // namespace
}  // namespace det::storage::curve_test
