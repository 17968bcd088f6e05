#include "storage/migrations.h"

#include <gtest/gtest.h>

#include <thread>

#include "storage/database.h"
#include "storage/logs_repo.h"
#include "tests/testing/postgres_fixture.h"

namespace det::storage {
namespace {

using det::testing::PostgresEnvironment;

std::vector<std::string> Tables(pqxx::connection& c) {
  pqxx::nontransaction tx(c);
  std::vector<std::string> names;
  for (const auto& row : tx.exec("SELECT tablename FROM pg_tables WHERE schemaname = 'public' "
                                 "ORDER BY tablename")) {
    names.push_back(row[0].as<std::string>());
  }
  return names;
}

TEST(MigrationsTest, FromEmptyCreatesTheWholeSchema) {
  auto connection = Connect(PostgresEnvironment::Get()->FreshDatabase());
  ASSERT_TRUE(connection.ok());
  auto version = Migrate(**connection);
  ASSERT_TRUE(version.ok()) << version.status().ToString();
  EXPECT_EQ(*version, LatestSchemaVersion());
  auto tables = Tables(**connection);
  for (const char* t : {"users", "user_sessions", "access_tokens", "agents", "agent_connections",
                        "resource_pools", "experiments", "trials", "metrics", "checkpoints",
                        "tasks", "allocations", "task_log_chunks", "instances", "scaling_decisions",
                        "cluster_info", "schema_migrations", "ingest_batches"}) {
    EXPECT_NE(std::find(tables.begin(), tables.end(), t), tables.end()) << t;
  }
}

TEST(MigrationsTest, LogLinesOfTheOneRowPerLineTableMoveIntoChunksInOrder) {
  auto connection = Connect(PostgresEnvironment::Get()->FreshDatabase());
  ASSERT_TRUE(connection.ok());
  {  // the schema as version 7 left it, with 2,500 lines of one task and one of another
    pqxx::work tx(**connection);
    tx.exec0(
        "CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL,"
        " applied_at timestamptz NOT NULL DEFAULT now())");
    for (const Migration& m : kMigrations) {
      if (m.version > 7) break;
      tx.exec0(m.sql);
      tx.exec_params("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", m.version,
                     std::string(m.name));
    }
    tx.exec0(
        "INSERT INTO task_logs (task_id, agent_id, timestamp, stdtype, log, allocation_id,"
        " source_offset) SELECT 't1', 'a1', det_ts(1767225600000000000 + i * 1000), 'stdout',"
        " 'line ' || i, 't1.1', i * 10 FROM generate_series(0, 2499) i");
    tx.exec0(
        "INSERT INTO task_logs (task_id, timestamp, level, stdtype, log) VALUES"
        " ('t2', now(), 'WARNING', 'stderr', 'the other task')");
    tx.commit();
  }
  ASSERT_TRUE(Migrate(**connection).ok());
  pqxx::work tx(**connection);
  EXPECT_EQ(tx.exec1("SELECT count(*) FROM task_log_chunks WHERE task_id = 't1'")[0].as<int>(), 3);
  std::vector<StoredLogLine> lines;
  while (true) {
    auto page = ReadTaskLogs(tx, "t1", LogQuery{lines.empty() ? 0 : lines.back().id}, 1000);
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    if (page->empty()) break;
    lines.insert(lines.end(), page->begin(), page->end());
  }
  ASSERT_EQ(lines.size(), 2500u);
  for (int i = 0; i < 2500; ++i) {
    ASSERT_EQ(lines[i].line.log, "line " + std::to_string(i));
    ASSERT_EQ(lines[i].line.source_offset, i * 10);
    ASSERT_EQ(lines[i].line.timestamp_ns, 1767225600000000000 + int64_t{i} * 1000);
  }
  auto other = ReadTaskLogs(tx, "t2", LogQuery{}, 10);
  ASSERT_EQ(other->size(), 1u);
  EXPECT_EQ(other->at(0).line.level, "WARNING");
  EXPECT_EQ(other->at(0).line.stdtype, "stderr");
}

TEST(MigrationsTest, ReRunningIsANoOp) {
  auto connection = Connect(PostgresEnvironment::Get()->FreshDatabase());
  ASSERT_TRUE(Migrate(**connection).ok());
  auto again = Migrate(**connection);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  pqxx::nontransaction tx(**connection);
  EXPECT_EQ(tx.exec1("SELECT count(*) FROM schema_migrations")[0].as<size_t>(), kMigrations.size());
}

TEST(MigrationsTest, ConcurrentMastersMigrateOnce) {
  DbConfig db = PostgresEnvironment::Get()->FreshDatabase();
  std::vector<Status> results(4);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      auto connection = Connect(db);
      results[i] = connection.ok() ? Migrate(**connection).status() : connection.status();
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& r : results) EXPECT_TRUE(r.ok()) << r.ToString();
  auto connection = Connect(db);
  pqxx::nontransaction tx(**connection);
  EXPECT_EQ(tx.exec1("SELECT count(*) FROM schema_migrations")[0].as<size_t>(), kMigrations.size());
}

TEST(MigrationsTest, NewerSchemaIsRefusedNamingBothVersions) {
  auto connection = Connect(PostgresEnvironment::Get()->FreshDatabase());
  ASSERT_TRUE(Migrate(**connection).ok());
  {
    pqxx::work tx(**connection);
    tx.exec_params("INSERT INTO schema_migrations (version, name) VALUES ($1, 'from_the_future')",
                   LatestSchemaVersion() + 1);
    tx.commit();
  }
  auto refused = Migrate(**connection);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  const std::string& m = refused.status().message();
  EXPECT_NE(m.find("version " + std::to_string(LatestSchemaVersion() + 1)), std::string::npos) << m;
  EXPECT_NE(m.find("(" + std::to_string(LatestSchemaVersion()) + ")"), std::string::npos) << m;
}

TEST(DatabaseTest, RunRetriesIdempotentWorkAcrossAServerRestart) {
  auto& env = *PostgresEnvironment::Get();
  DbConfig db = env.FreshDatabase();
  Database database(db);
  ASSERT_TRUE(database
                  .Run([](pqxx::work& tx) {
                    tx.exec0("CREATE TABLE IF NOT EXISTS t (k int PRIMARY KEY)");
                    return Status::Ok();
                  })
                  .ok());
  ASSERT_TRUE(env.server().Restart().ok());  // the pooled connection is now broken
  Status status = database.Run([](pqxx::work& tx) {
    tx.exec0("INSERT INTO t VALUES (1) ON CONFLICT DO NOTHING");
    return Status::Ok();
  });
  ASSERT_TRUE(status.ok()) << status.ToString();
  int64_t rows = 0;
  ASSERT_TRUE(database
                  .Run([&](pqxx::work& tx) {
                    rows = tx.exec1("SELECT count(*) FROM t")[0].as<int64_t>();
                    return Status::Ok();
                  })
                  .ok());
  EXPECT_EQ(rows, 1);
}

}  // namespace
}  // namespace det::storage
