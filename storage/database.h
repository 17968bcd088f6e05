#pragma once

#include <functional>
#include <memory>
#include <mutex>
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

  const DbConfig& config() const { return config_; }

 private:
  Result<std::unique_ptr<pqxx::connection>> Take();
  void Give(std::unique_ptr<pqxx::connection> connection);

  DbConfig config_;
  size_t pool_size_;
  std::mutex mu_;
  std::vector<std::unique_ptr<pqxx::connection>> idle_;
};

// Converts the exception in flight (call inside a catch) into a Status with `what` as context.
Status StatusFromException(const std::string& what);

}  // namespace det::storage
