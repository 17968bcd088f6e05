#include "storage/ingest_writer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "storage/logs_repo.h"
#include "storage/metrics_repo.h"
#include "storage/migrations.h"
#include "tests/testing/postgres_fixture.h"

namespace det::storage {
namespace {

using det::testing::PostgresEnvironment;

DbConfig MigratedDatabase() { return PostgresEnvironment::Get()->MigratedDatabase(); }

int64_t Scalar(const DbConfig& db, const std::string& sql) {
  auto connection = Connect(db);
  pqxx::nontransaction tx(**connection);
  return tx.exec1(sql)[0].as<int64_t>();
}

// Every stored line of `task`, read as the master reads them: page by page.
std::vector<StoredLogLine> StoredLines(const DbConfig& db, const std::string& task) {
  auto connection = Connect(db);
  pqxx::work tx(**connection);
  std::vector<StoredLogLine> all;
  while (true) {
    auto page = ReadTaskLogs(tx, task, LogQuery{all.empty() ? 0 : all.back().id}, 700);
    EXPECT_TRUE(page.ok()) << page.status().ToString();
    if (!page.ok() || page->empty()) return all;
    all.insert(all.end(), page->begin(), page->end());
  }
}

int64_t StoredLineCount(const DbConfig& db) {
  return Scalar(db, "SELECT coalesce(sum(line_count), 0)::bigint FROM task_log_chunks");
}

std::vector<MetricPoint> Points(int64_t trial, int64_t first_step, int n) {
  std::vector<MetricPoint> points;
  for (int i = 0; i < n; ++i) {
    points.push_back({trial, "training", first_step + i, 0,
                      R"({"loss": )" + std::to_string(1.0 / (first_step + i + 1)) + "}"});
  }
  return points;
}

std::vector<LogLine> Lines(const std::string& task, int first, int n) {
  std::vector<LogLine> lines;
  for (int i = 0; i < n; ++i) {
    lines.push_back({task, "agent-1", 1767225600000000000 + int64_t{first + i} * 1000, "INFO",
                     "stdout", "line " + std::to_string(first + i) + " with \t tab and \\ slash"});
  }
  return lines;
}

TEST(IngestWriterTest, BatchIsReadableOnceAcknowledged) {
  DbConfig db = MigratedDatabase();
  IngestWriter writer(db);
  ASSERT_TRUE(writer.WriteMetrics("b1", Points(1, 0, 100)).ok());
  EXPECT_EQ(Scalar(db, "SELECT count(*) FROM metrics WHERE trial_id = 1"), 100);
  EXPECT_EQ(Scalar(db, "SELECT (metrics->>'loss')::float * 1000 FROM metrics WHERE step = 0"),
            1000);
  ASSERT_TRUE(writer.WriteLogs("l1", Lines("task-1", 0, 50)).ok());
  const std::vector<StoredLogLine> stored = StoredLines(db, "task-1");
  ASSERT_EQ(stored.size(), 50u);
  EXPECT_EQ(stored[0].line.log, "line 0 with \t tab and \\ slash");
  EXPECT_EQ(stored[49].line.timestamp_ns, 1767225600000000000 + 49 * 1000);
  EXPECT_EQ(stored[0].line.agent_id, "agent-1");
  EXPECT_EQ(Scalar(db, "SELECT extract(epoch FROM min(first_ts))::bigint FROM task_log_chunks"),
            1767225600);
}

TEST(IngestWriterTest, RetriedBatchIdIsNotWrittenTwice) {
  DbConfig db = MigratedDatabase();
  IngestWriter writer(db);
  ASSERT_TRUE(writer.WriteLogs("same", Lines("t", 0, 10)).ok());
  ASSERT_TRUE(writer.WriteLogs("same", Lines("t", 0, 10)).ok());
  EXPECT_EQ(StoredLineCount(db), 10);
}

TEST(IngestWriterTest, RepeatedPointsInANewBatchKeepTheStoredOnes) {
  DbConfig db = MigratedDatabase();
  IngestWriter writer(db);
  ASSERT_TRUE(writer.WriteMetrics("first", Points(7, 0, 10)).ok());
  ASSERT_TRUE(writer.WriteMetrics("overlap", Points(7, 5, 10)).ok());  // steps 5..14
  EXPECT_EQ(Scalar(db, "SELECT count(*) FROM metrics WHERE trial_id = 7"), 15);
}

TEST(IngestWriterTest, ServerRestartMidStreamLosesNothingAndDuplicatesNothing) {
  auto& env = *PostgresEnvironment::Get();
  DbConfig db = MigratedDatabase();
  constexpr int kBatches = 60, kRows = 500;
  std::atomic<int> acknowledged{0};
  std::vector<Status> failures;
  int reconnects = 0;
  std::thread stream([&] {
    IngestWriter writer(db);
    for (int b = 0; b < kBatches; ++b) {
      Status metrics = writer.WriteMetrics("m" + std::to_string(b), Points(3, b * kRows, kRows));
      Status logs = writer.WriteLogs("l" + std::to_string(b), Lines("t3", b * kRows, kRows));
      if (!metrics.ok()) failures.push_back(metrics);
      if (!logs.ok()) failures.push_back(logs);
      acknowledged = b + 1;
    }
    reconnects = writer.reconnects();
  });
  while (acknowledged < kBatches / 3) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_TRUE(env.server().Restart().ok());  // mid-stream
  stream.join();
  for (const auto& f : failures) ADD_FAILURE() << f.ToString();
  EXPECT_GE(reconnects, 1) << "the restart did not interrupt the stream";
  EXPECT_EQ(Scalar(db, "SELECT count(*) FROM metrics"), kBatches * kRows);
  const std::vector<StoredLogLine> stored = StoredLines(db, "t3");
  ASSERT_EQ(stored.size(), static_cast<size_t>(kBatches * kRows));
  for (int i = 0; i < kBatches * kRows; ++i) {
    ASSERT_EQ(stored[i].line.log, Lines("t3", i, 1)[0].log) << "line " << i;
  }
}

TEST(IngestWriterTest, LinesWithKnownOffsetsAreStoredOnceAcrossBatches) {
  DbConfig db = MigratedDatabase();
  IngestWriter writer(db);
  auto lines = [](int first, int n) {
    std::vector<LogLine> out = Lines("task-o", first, n);
    for (int i = 0; i < n; ++i) {
      out[i].allocation_id = "task-o.1";
      out[i].source_offset = (first + i) * 10;
    }
    return out;
  };
  ASSERT_TRUE(writer.WriteLogs("inc-1/1", lines(0, 10)).ok());
  // A restarted agent re-reads from an older offset and batches differently.
  ASSERT_TRUE(writer.WriteLogs("inc-2/1", lines(5, 10)).ok());
  const std::vector<StoredLogLine> stored = StoredLines(db, "task-o");
  ASSERT_EQ(stored.size(), 15u);
  for (int i = 0; i < 15; ++i) EXPECT_EQ(stored[i].line.source_offset, i * 10);
  // A later batch that repeats only stderr lines is cut by stderr's ranges, not stdout's.
  std::vector<LogLine> err = lines(0, 3);
  for (auto& line : err) line.stdtype = "stderr";
  ASSERT_TRUE(writer.WriteLogs("inc-2/2", err).ok());
  EXPECT_EQ(StoredLines(db, "task-o").size(), 18u);
  ASSERT_TRUE(writer.WriteLogs("inc-3/1", err).ok());
  EXPECT_EQ(StoredLines(db, "task-o").size(), 18u);
}

TEST(IngestWriterTest, APageOfLongLinesStopsAtItsByteBound) {
  DbConfig db = MigratedDatabase();
  IngestWriter writer(db);
  std::vector<LogLine> lines = Lines("task-long", 0, 10);
  for (auto& line : lines) line.log = std::string(1 << 20, 'x');
  ASSERT_TRUE(writer.WriteLogs("long", lines).ok());
  auto connection = Connect(db);
  pqxx::work tx(**connection);
  auto page = ReadTaskLogs(tx, "task-long", LogQuery{}, 100);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->size(), kMaxLogPageBytes / (1 << 20));
  size_t total = page->size();
  for (int64_t after = page->back().id;;) {
    auto next = ReadTaskLogs(tx, "task-long", LogQuery{after}, 100);
    if (next->empty()) break;
    total += next->size();
    after = next->back().id;
  }
  EXPECT_EQ(total, 10u);
}

// What a reader of whole chunks (det) selects from them, page by page: the same lines, with the
// same ids, as the master's line pages give, for a cursor and a time range.
TEST(IngestWriterTest, ChunkPagesSelectTheSameLinesAsLinePages) {
  DbConfig db = MigratedDatabase();
  IngestWriter writer(db);
  for (int batch = 0; batch < 30; ++batch) {
    ASSERT_TRUE(
        writer.WriteLogs("c" + std::to_string(batch), Lines("task-c", batch * 100, 100)).ok());
  }
  const std::vector<StoredLogLine> stored = StoredLines(db, "task-c");
  ASSERT_EQ(stored.size(), 3000u);
  auto connection = Connect(db);
  pqxx::work tx(**connection);
  // From mid-chunk, in a time range that cuts chunks at both ends.
  LogQuery query{stored[150].id, stored[420].line.timestamp_ns, stored[2500].line.timestamp_ns};
  std::vector<int64_t> ids;
  std::vector<std::string> texts;
  int pages = 0;
  for (LogQuery page_query = query;; ++pages) {
    auto chunks = ReadTaskLogChunks(tx, "task-c", page_query, 250);
    ASSERT_TRUE(chunks.ok()) << chunks.status().ToString();
    if (chunks->empty()) break;
    ASSERT_LT(pages, 100) << "the pages do not end";
    for (const auto& chunk : *chunks) {
      auto lines = DecodeLogChunk(chunk.codec, chunk.data);
      ASSERT_TRUE(lines.ok());
      ASSERT_EQ(static_cast<int64_t>(lines->size()), chunk.line_count);
      for (size_t i = 0; i < lines->size(); ++i) {
        const int64_t id = LogLineId(chunk.id, i);
        if (!page_query.Selects(id, (*lines)[i].timestamp_ns)) continue;
        ids.push_back(id);
        texts.push_back((*lines)[i].log);
      }
      page_query.after_id = LogLineId(chunk.id, lines->size()) - 1;
    }
  }
  EXPECT_GE(pages, 2);
  std::vector<int64_t> expected_ids;
  std::vector<std::string> expected_texts;
  for (const auto& line : stored) {
    if (!query.Selects(line.id, line.line.timestamp_ns)) continue;
    expected_ids.push_back(line.id);
    expected_texts.push_back(line.line.log);
  }
  ASSERT_EQ(expected_ids.size(), 2500u - 420u);
  EXPECT_EQ(ids, expected_ids);
  EXPECT_EQ(texts, expected_texts);
}

TEST(IngestWriterTest, ConcurrentWritersEachLandAllTheirRows) {
  DbConfig db = MigratedDatabase();
  std::vector<std::thread> writers;
  std::atomic<int> failed{0};
  for (int w = 0; w < 4; ++w) {
    writers.emplace_back([&, w] {
      IngestWriter writer(db);
      for (int b = 0; b < 20; ++b) {
        std::string id = "w" + std::to_string(w) + "b" + std::to_string(b);
        if (!writer.WriteMetrics(id, Points(100 + w, b * 50, 50)).ok()) ++failed;
        if (!writer.WriteLogs(id, Lines("task" + std::to_string(w), b * 50, 50)).ok()) ++failed;
      }
    });
  }
  for (auto& t : writers) t.join();
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(Scalar(db, "SELECT count(*) FROM metrics"), 4 * 20 * 50);
  EXPECT_EQ(StoredLineCount(db), 4 * 20 * 50);
}

}  // namespace
}  // namespace det::storage
