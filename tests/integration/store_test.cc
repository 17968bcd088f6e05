// The master's store writer against a real PostgreSQL: AfterCommit confirms what was queued before
// it only once that is committed, and reports a failed write to the callbacks that depend on it.
#include "master/store.h"

#include <gtest/gtest.h>

#include <future>

#include "tests/testing/postgres_fixture.h"

namespace det::master {
namespace {

using det::testing::PostgresEnvironment;

// Queues an AfterCommit and waits for its verdict.
Status AfterCommitStatus(Store& store) {
  auto verdict = std::make_shared<std::promise<Status>>();
  std::future<Status> answer = verdict->get_future();
  store.AfterCommit([verdict](const Status& stored) { verdict->set_value(stored); });
  return answer.get();
}

int64_t RowsIn(const storage::DbConfig& db) {
  return det::testing::InTransaction(
      db, [](pqxx::work& tx) { return tx.exec1("SELECT count(*) FROM notes")[0].as<int64_t>(); });
}

TEST(StoreTest, AfterCommitComesOnceWhatPrecedesItIsCommitted) {
  const storage::DbConfig db = PostgresEnvironment::Get()->FreshDatabase();
  det::testing::InTransaction(db, [](pqxx::work& tx) { tx.exec("CREATE TABLE notes (n int)"); });
  Store store(db);
  for (int i = 0; i < 500; ++i) {
    store.Enqueue([i](pqxx::work& tx) { tx.exec_params("INSERT INTO notes VALUES ($1)", i); });
  }
  // Whatever the callback confirms is already visible to any other connection.
  int64_t seen_at_commit = -1;
  auto verdict = std::make_shared<std::promise<Status>>();
  std::future<Status> answer = verdict->get_future();
  store.AfterCommit([&, verdict](const Status& stored) {
    seen_at_commit = RowsIn(db);
    verdict->set_value(stored);
  });
  const Status stored = answer.get();
  EXPECT_TRUE(stored.ok()) << stored.ToString();
  EXPECT_EQ(seen_at_commit, 500);
}

TEST(StoreTest, AFailedWriteIsReportedToTheNextAfterCommitOnly) {
  const storage::DbConfig db = PostgresEnvironment::Get()->FreshDatabase();
  det::testing::InTransaction(db, [](pqxx::work& tx) { tx.exec("CREATE TABLE notes (n int)"); });
  Store store(db);
  store.Enqueue([](pqxx::work& tx) { tx.exec("INSERT INTO no_such_table VALUES (1)"); });
  const Status failed = AfterCommitStatus(store);
  EXPECT_EQ(failed.code(), StatusCode::kUnavailable) << failed.ToString();
  // The next change is written and confirmed: the failure was the earlier one's alone.
  store.Enqueue([](pqxx::work& tx) { tx.exec("INSERT INTO notes VALUES (1)"); });
  const Status stored = AfterCommitStatus(store);
  EXPECT_TRUE(stored.ok()) << stored.ToString();
  EXPECT_EQ(RowsIn(db), 1);
}

}  // namespace
}  // namespace det::master
