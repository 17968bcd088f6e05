// The master's store writer against a real PostgreSQL: AfterCommit confirms what was queued before
// it only once that is committed, and reports a failed write to the callbacks that depend on it.
#include "master/records/store.h"

#include <gtest/gtest.h>

#include <future>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "storage/sql_support.h"
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

// Notices and AfterCommit callbacks wait for the next write instead of ending a transaction: a
// burst of task ends (each a change then a notice to its agent) is one commit, not one each.
TEST(StoreTest, NoticesAndCallbacksDoNotCutABurstIntoTransactions) {
  const storage::DbConfig db = PostgresEnvironment::Get()->FreshDatabase();
  det::testing::InTransaction(db, [](pqxx::work& tx) {
    tx.exec("CREATE TABLE notes (n int, tx bigint DEFAULT txid_current())");
  });
  Store store(db);
  // Holds the store's thread in a write until the burst below is queued behind it.
  std::promise<void> go;
  std::shared_future<void> queued = go.get_future().share();
  store.Enqueue([queued](pqxx::work&) { queued.wait(); });
  constexpr int kEnds = 200;
  std::vector<std::future<Status>> verdicts;
  for (int i = 0; i < kEnds; ++i) {
    store.EnqueueStatement([i](pqxx::transaction_base& tx) {
      return "INSERT INTO notes (n) VALUES (" + storage::Literal(tx, i) + ")";
    });
    store.EnqueueNotice({"agent", "allocation-" + std::to_string(i), 0, ""});
    auto verdict = std::make_shared<std::promise<Status>>();
    verdicts.push_back(verdict->get_future());
    store.AfterCommit([verdict](const Status& stored) { verdict->set_value(stored); });
  }
  go.set_value();
  for (auto& verdict : verdicts) {
    const Status stored = verdict.get();
    EXPECT_TRUE(stored.ok()) << stored.ToString();
  }
  EXPECT_EQ(store.TakeNotices().size(), static_cast<size_t>(kEnds));
  const int64_t transactions = det::testing::InTransaction(db, [](pqxx::work& tx) {
    return tx.exec1("SELECT count(DISTINCT tx) FROM notes")[0].as<int64_t>();
  });
  EXPECT_EQ(RowsIn(db), kEnds);
  EXPECT_LE(transactions, 2) << "each notice or callback ended a transaction";
}

// A change PostgreSQL refuses inside a burst loses only itself: the others are written, its
// callback says it was not stored and the notice after it is withheld; the rest are confirmed.
TEST(StoreTest, ARefusedChangeInABurstLosesOnlyItself) {
  const storage::DbConfig db = PostgresEnvironment::Get()->FreshDatabase();
  det::testing::InTransaction(db, [](pqxx::work& tx) { tx.exec("CREATE TABLE notes (n int)"); });
  Store store(db);
  std::promise<void> go;
  std::shared_future<void> queued = go.get_future().share();
  store.Enqueue([queued](pqxx::work&) { queued.wait(); });
  constexpr int kChanges = 10, kRefused = 5;
  std::vector<std::future<Status>> verdicts;
  for (int i = 0; i < kChanges; ++i) {
    store.EnqueueStatement([i](pqxx::transaction_base& tx) {
      return std::string(i == kRefused ? "INSERT INTO no_such_table" : "INSERT INTO notes") +
             " VALUES (" + storage::Literal(tx, i) + ")";
    });
    store.EnqueueNotice({"agent", std::to_string(i), 0, ""});
    auto verdict = std::make_shared<std::promise<Status>>();
    verdicts.push_back(verdict->get_future());
    store.AfterCommit([verdict](const Status& stored) { verdict->set_value(stored); });
  }
  go.set_value();
  for (int i = 0; i < kChanges; ++i) {
    const Status stored = verdicts[i].get();
    EXPECT_EQ(stored.ok(), i != kRefused) << i << ": " << stored.ToString();
  }
  std::vector<std::string> noticed;
  for (const Store::Notice& notice : store.TakeNotices()) noticed.push_back(notice.allocation_id);
  EXPECT_EQ(noticed, (std::vector<std::string>{"0", "1", "2", "3", "4", "6", "7", "8", "9"}));
  EXPECT_EQ(RowsIn(db), kChanges - 1);
}

// Statements carry their values as literals quoted by the connection: quotes, backslashes and
// SQL in a value are stored as they are; a failing statement is reported like a failing op.
TEST(StoreTest, StatementsStoreEveryValueAsItIs) {
  const storage::DbConfig db = PostgresEnvironment::Get()->FreshDatabase();
  det::testing::InTransaction(db, [](pqxx::work& tx) { tx.exec("CREATE TABLE texts (t text)"); });
  Store store(db);
  const std::vector<std::string> values = {
      "it's", "back\\slash\\'", "'); DROP TABLE texts; --", "$$dollar$$", "über ☃", ""};
  for (const std::string& value : values) {
    store.EnqueueStatement([value](pqxx::transaction_base& tx) {
      return "INSERT INTO texts VALUES (" + storage::Literal(tx, value) + ")";
    });
  }
  store.EnqueueStatement([](pqxx::transaction_base& tx) {
    return "INSERT INTO texts VALUES (" + storage::Literal(tx, std::optional<std::string>()) + ")";
  });
  EXPECT_TRUE(AfterCommitStatus(store).ok());
  const std::vector<std::string> stored = det::testing::InTransaction(db, [](pqxx::work& tx) {
    std::vector<std::string> texts;
    for (const auto& row : tx.exec("SELECT coalesce(t, 'NULL') FROM texts ORDER BY ctid")) {
      texts.push_back(row[0].as<std::string>());
    }
    return texts;
  });
  std::vector<std::string> expected = values;
  expected.push_back("NULL");
  EXPECT_EQ(stored, expected);

  store.EnqueueStatement(
      [](pqxx::transaction_base&) { return std::string("INSERT INTO no_such_table VALUES (1)"); });
  EXPECT_EQ(AfterCommitStatus(store).code(), StatusCode::kUnavailable);
  EXPECT_TRUE(AfterCommitStatus(store).ok());
}

// The synchronous_commit each row's transaction ran with, in insertion order.
std::vector<std::string> CommitModes(const storage::DbConfig& db) {
  return det::testing::InTransaction(db, [](pqxx::work& tx) {
    std::vector<std::string> modes;
    for (const auto& row : tx.exec("SELECT mode FROM modes ORDER BY ctid")) {
      modes.push_back(row[0].as<std::string>());
    }
    return modes;
  });
}

void WaitForRows(const storage::DbConfig& db, size_t rows) {
  for (int i = 0; i < 1000 && CommitModes(db).size() < rows; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

// Lazy changes alone, with nothing waiting for their commit, do not wait for the disk; durable
// ones, ops, and any commit a callback or notice waits for do.
TEST(StoreTest, OnlyLazyChangesNothingWaitsForSkipTheDisk) {
  const storage::DbConfig db = PostgresEnvironment::Get()->FreshDatabase();
  det::testing::InTransaction(db,
                              [](pqxx::work& tx) { tx.exec("CREATE TABLE modes (mode text)"); });
  Store store(db);
  const std::string insert = "INSERT INTO modes VALUES (current_setting('synchronous_commit'))";
  const auto statement = [insert](pqxx::transaction_base&) { return insert; };
  store.EnqueueStatement(statement, Store::Commit::kLazy);
  WaitForRows(db, 1);
  store.EnqueueStatement(statement);
  WaitForRows(db, 2);
  store.Enqueue([insert](pqxx::work& tx) { tx.exec(insert); });
  WaitForRows(db, 3);
  // Held behind an op so that each pair below is written in one round.
  std::promise<void> go;
  std::shared_future<void> queued = go.get_future().share();
  store.Enqueue([queued](pqxx::work&) { queued.wait(); });
  store.EnqueueStatement(statement, Store::Commit::kLazy);
  store.EnqueueNotice({"agent", "allocation", 0, ""});
  go.set_value();
  EXPECT_TRUE(AfterCommitStatus(store).ok());
  std::promise<void> go_again;
  queued = go_again.get_future().share();
  store.Enqueue([queued](pqxx::work&) { queued.wait(); });
  store.EnqueueStatement(statement, Store::Commit::kLazy);
  store.EnqueueStatement(statement);
  go_again.set_value();
  WaitForRows(db, 6);
  EXPECT_EQ(CommitModes(db), (std::vector<std::string>{"off", "on", "on", "on", "on", "on"}));
}

// A round nobody is answered from (a change and its agent's notice) waits for more to share its
// commit; one an AfterCommit waits for is written at once, with what waited.
TEST(StoreTest, ARoundNobodyIsAnsweredFromWaitsToShareTheNextCommit) {
  const storage::DbConfig db = PostgresEnvironment::Get()->FreshDatabase();
  det::testing::InTransaction(db, [](pqxx::work& tx) {
    tx.exec("CREATE TABLE notes (n int, tx bigint DEFAULT txid_current())");
  });
  Store store(db, std::chrono::milliseconds(3000));
  const auto insert = [](int n) {
    return [n](pqxx::transaction_base& tx) {
      return "INSERT INTO notes (n) VALUES (" + storage::Literal(tx, n) + ")";
    };
  };
  const auto started = std::chrono::steady_clock::now();
  store.EnqueueStatement(insert(1));
  store.EnqueueNotice({"agent", "allocation-1", 0, ""});
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(RowsIn(db), 0) << "written without waiting for more";
  EXPECT_TRUE(store.TakeNotices().empty());
  store.EnqueueStatement(insert(2));
  EXPECT_TRUE(AfterCommitStatus(store).ok());
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::milliseconds(2500))
      << "the callback waited out the group commit";
  EXPECT_EQ(store.TakeNotices().size(), 1u);
  const int64_t transactions = det::testing::InTransaction(db, [](pqxx::work& tx) {
    return tx.exec1("SELECT count(DISTINCT tx) FROM notes")[0].as<int64_t>();
  });
  EXPECT_EQ(transactions, 1);
  EXPECT_EQ(RowsIn(db), 2);
}

// A keyed lazy change still queued is replaced by the next of its key: a lazy one takes its
// place, a durable one drops it and queues at the end; other keys and unkeyed changes stay.
TEST(StoreTest, ALaterChangeOfTheSameKeySupersedesAQueuedLazyOne) {
  const storage::DbConfig db = PostgresEnvironment::Get()->FreshDatabase();
  det::testing::InTransaction(
      db, [](pqxx::work& tx) { tx.exec("CREATE TABLE changes (seq serial, change text)"); });
  Store store(db, std::chrono::milliseconds(3000));  // one round: held until the AfterCommit
  const auto change = [](std::string text) {
    return [text](pqxx::transaction_base& tx) {
      return "INSERT INTO changes (change) VALUES (" + storage::Literal(tx, text) + ")";
    };
  };
  using Commit = Store::Commit;
  store.EnqueueStatement(change("a PULLING"), Commit::kLazy, "a");
  store.EnqueueStatement(change("b PULLING"), Commit::kLazy, "b");
  store.EnqueueStatement(change("a STARTING"), Commit::kLazy, "a");
  store.EnqueueStatement(change("queued"), Commit::kDurable);
  store.EnqueueStatement(change("a RUNNING"), Commit::kLazy, "a");
  store.EnqueueStatement(change("b ended"), Commit::kDurable, "b");
  store.EnqueueStatement(change("unkeyed"), Commit::kLazy);
  store.EnqueueStatement(change("b after its end"), Commit::kLazy, "b");
  ASSERT_TRUE(AfterCommitStatus(store).ok());
  const std::vector<std::string> written = det::testing::InTransaction(db, [](pqxx::work& tx) {
    std::vector<std::string> rows;
    for (const auto& row : tx.exec("SELECT change FROM changes ORDER BY seq")) {
      rows.push_back(row[0].as<std::string>());
    }
    return rows;
  });
  EXPECT_EQ(written, (std::vector<std::string>{"a RUNNING", "queued", "b ended", "unkeyed",
                                               "b after its end"}));
  // A key's lazy change in a round already written is not touched by a later one.
  store.EnqueueStatement(change("a TERMINATED"), Commit::kDurable, "a");
  ASSERT_TRUE(AfterCommitStatus(store).ok());
  EXPECT_EQ(
      det::testing::InTransaction(
          db,
          [](pqxx::work& tx) { return tx.exec1("SELECT count(*) FROM changes")[0].as<int64_t>(); }),
      6);
}

// Statements over one message's worth are still one transaction (BEGIN in the first message,
// COMMIT in the last), and one refused among them leaves nothing of the others behind before they
// are written again one at a time.
TEST(StoreTest, StatementsLongerThanAMessageAreOneTransaction) {
  const storage::DbConfig db = PostgresEnvironment::Get()->FreshDatabase();
  det::testing::InTransaction(db, [](pqxx::work& tx) {
    tx.exec("CREATE TABLE notes (n int, padding text, tx bigint DEFAULT txid_current())");
  });
  Store store(db);
  constexpr int kStatements = 600;  // about 600 KiB of text: three messages
  const std::string padding(1000, 'x');
  auto enqueue_all = [&](int refused) {
    for (int i = 0; i < kStatements; ++i) {
      store.EnqueueStatement([i, refused, padding](pqxx::transaction_base& tx) {
        return std::string(i == refused ? "INSERT INTO no_such_table" : "INSERT INTO notes") +
               " (n, padding) VALUES (" + storage::Literal(tx, i) + ", " +
               storage::Literal(tx, padding) + ")";
      });
    }
  };
  std::promise<void> go;
  std::shared_future<void> queued = go.get_future().share();
  store.Enqueue([queued](pqxx::work&) { queued.wait(); });
  enqueue_all(-1);
  auto verdict = std::make_shared<std::promise<Status>>();
  std::future<Status> answer = verdict->get_future();
  store.AfterCommit([verdict](const Status& stored) { verdict->set_value(stored); });
  go.set_value();
  EXPECT_TRUE(answer.get().ok());
  EXPECT_EQ(RowsIn(db), kStatements);
  const auto transactions = [&db] {
    return det::testing::InTransaction(db, [](pqxx::work& tx) {
      return tx.exec1("SELECT count(DISTINCT tx) FROM notes")[0].as<int64_t>();
    });
  };
  EXPECT_EQ(transactions(), 1);

  det::testing::InTransaction(db, [](pqxx::work& tx) { tx.exec("TRUNCATE notes"); });
  std::promise<void> go_again;
  queued = go_again.get_future().share();
  store.Enqueue([queued](pqxx::work&) { queued.wait(); });
  enqueue_all(kStatements - 1);  // refused in the last message
  verdict = std::make_shared<std::promise<Status>>();
  answer = verdict->get_future();
  store.AfterCommit([verdict](const Status& stored) { verdict->set_value(stored); });
  go_again.set_value();
  EXPECT_EQ(answer.get().code(), StatusCode::kUnavailable);
  EXPECT_EQ(RowsIn(db), kStatements - 1)
      << "the first messages' rows were kept, then written again";
}

}  // namespace
}  // namespace det::master
