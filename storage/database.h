#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <pqxx/pqxx>
#include <vector>

#include "common/status.h"
#include "storage/db_config.h"

namespace det::storage {

// Opens a connection; failures name the host, port, database and user, and libpq's reason.
Result<std::unique_ptr<pqxx::connection>> Connect(const DbConfig& config);

// Runs `work` in a transaction on a connection from `pool`, committing on success. Exceptions from
// libpqxx become Status values. A broken connection (the server restarted) is replaced and the
// work retried, up to `attempts` times, so `work` must be idempotent: it may have run (and rolled
// back) before.
//
// Thread-safe: each call takes its own connection.
class Database {
 public:
  explicit Database(DbConfig config, int pool_size = 4);

  Status Run(const std::function<Status(pqxx::work&)>& work, int attempts = 5);
  // Like Run, without a transaction of its own (pqxx::nontransaction): what `work` sends decides.
  // A message of several statements is one transaction, in one round trip where Run's BEGIN,
  // statements and COMMIT take three. An exception drops the connection, so a transaction `work`
  // left open is rolled back by the server.
  Status RunUntransacted(const std::function<Status(pqxx::nontransaction&)>& work,
                         int attempts = 5);

  const DbConfig& config() const { return config_; }

 private:
  Result<std::unique_ptr<pqxx::connection>> Take();
  void Give(std::unique_ptr<pqxx::connection> connection);
  template <class Tx>
  Status RunIn(const std::function<Status(Tx&)>& work, int attempts);

  DbConfig config_;
  size_t pool_size_;
  std::mutex mu_;
  std::vector<std::unique_ptr<pqxx::connection>> idle_;
};

// What `read` returns, run as one transaction of `database` (Database::Run: retried on a broken
// connection, so `read` must be idempotent); its error, or the database's, otherwise.
template <class T>
Result<T> Transact(Database& database, const std::function<Result<T>(pqxx::work&)>& read) {
  std::optional<T> value;
  DET_RETURN_IF_ERROR(database.Run([&](pqxx::work& tx) -> Status {
    DET_ASSIGN_OR_RETURN(value, read(tx));
    return Status::Ok();
  }));
  return std::move(*value);
}

// A transaction's first statement when nothing waits for its commit (synchronous_commit off for
// it alone): the commit returns before its WAL reaches the disk. A crash of the caller loses
// nothing; one of PostgreSQL or its host may lose it, but never without what was committed after it
// (a later durable commit flushes the WAL before it too).
inline constexpr const char* kUnacknowledgedCommit = "SET LOCAL synchronous_commit TO off";

// Converts the exception in flight (call inside a catch) into a Status with `what` as context.
Status StatusFromException(const std::string& what);

}  // namespace det::storage
