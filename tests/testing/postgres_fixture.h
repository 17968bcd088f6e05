#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "bus/rpc_client.h"
#include "storage/database.h"
#include "storage/local_postgres.h"
#include "storage/migrations.h"

namespace det::testing {

// The PostgreSQL server of a test process: the one its ctest run shares when DET_TEST_POSTGRES_DIR
// names its folder (the fixture `test_postgres`: test-postgres started it, and stops it after the
// run's last test), else a private one started the way the product starts its own
// (storage::LocalPostgres) in a temporary folder and removed at the end. Tests get fresh, uniquely
// named databases from it, so they do not see each other's rows; a process drops the ones it made
// in the shared server when it ends (the run's disk stays bounded). A process never starts or
// stops the shared server: when it is not running, SetUp fails with the end of its log.
class PostgresEnvironment : public ::testing::Environment {
 public:
  static PostgresEnvironment* Get() { return instance_; }

  void SetUp() override {
    instance_ = this;
    const char* shared = std::getenv("DET_TEST_POSTGRES_DIR");
    shared_ = shared && *shared;
    dir_ = shared_ ? std::filesystem::path(shared)
                   : std::filesystem::temp_directory_path() / ("det-pg-" + bus::RandomId());
    if (shared_) {
      auto running = storage::LocalPostgres::RunningIn(dir_.string());
      ASSERT_TRUE(running.ok()) << running.status().ToString();
      ASSERT_TRUE(*running) << "the shared test PostgreSQL in " << dir_.string()
                            << " is not running (test_postgres.start starts it); its log ends:\n"
                            << storage::LocalPostgres::LogTail(dir_.string());
    }
    auto pg = storage::LocalPostgres::Start({dir_.string()});
    ASSERT_TRUE(pg.ok()) << pg.status().ToString();
    pg_ = std::move(*pg);
  }
  void TearDown() override {
    if (shared_ && pg_) DropDatabasesMade();
    pg_.reset();  // stops a private server; a shared one runs on
    if (!shared_) std::filesystem::remove_all(dir_);
  }

  storage::LocalPostgres& server() { return *pg_; }
  const std::filesystem::path& dir() const { return dir_; }

  // Creates an empty database and returns how to reach it.
  storage::DbConfig FreshDatabase() {
    storage::DbConfig db = pg_->db();
    db.name = "test_" + bus::RandomId().substr(0, 12);
    storage::DbConfig admin = pg_->db();
    admin.name = "postgres";
    auto connection = storage::Connect(admin);
    EXPECT_TRUE(connection.ok()) << connection.status().ToString();
    pqxx::nontransaction tx(**connection);
    tx.exec0("CREATE DATABASE " + tx.quote_name(db.name));
    made_.push_back(db.name);
    return db;
  }

  // A fresh database with the product's schema.
  storage::DbConfig MigratedDatabase() {
    storage::DbConfig db = FreshDatabase();
    auto connection = storage::Connect(db);
    EXPECT_TRUE(connection.ok()) << connection.status().ToString();
    auto migrated = storage::Migrate(**connection);
    EXPECT_TRUE(migrated.ok()) << migrated.status().ToString();
    return db;
  }

 private:
  // Drops the databases FreshDatabase made, ending sessions still on them (a test's processes).
  void DropDatabasesMade() {
    storage::DbConfig admin = pg_->db();
    admin.name = "postgres";
    auto connection = storage::Connect(admin);
    if (!connection.ok()) return;  // the server's own failure shows elsewhere
    pqxx::nontransaction tx(**connection);
    for (const std::string& name : made_) {
      try {
        tx.exec0("DROP DATABASE IF EXISTS " + tx.quote_name(name) + " WITH (FORCE)");
      } catch (const std::exception&) {  // left for test_postgres.stop, which removes them all
      }
    }
  }

  static inline PostgresEnvironment* instance_ = nullptr;
  std::vector<std::string> made_;  // databases FreshDatabase made
  std::filesystem::path dir_;
  bool shared_ = false;  // the ctest run's server, not this process's
  std::unique_ptr<storage::LocalPostgres> pg_;
};

// Runs `fn(tx)` in a transaction on its own connection, commits, and returns what `fn` returns.
template <typename Fn>
auto InTransaction(const storage::DbConfig& db, Fn fn) {
  auto connection = storage::Connect(db);
  if (!connection.ok()) throw std::runtime_error(connection.status().ToString());
  pqxx::work tx(**connection);
  if constexpr (std::is_void_v<decltype(fn(tx))>) {
    fn(tx);
    tx.commit();
  } else {
    auto result = fn(tx);
    tx.commit();
    return result;
  }
}

}  // namespace det::testing
