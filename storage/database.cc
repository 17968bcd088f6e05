#include "storage/database.h"

#include <spdlog/spdlog.h>

#include <thread>

namespace det::storage {

Result<std::unique_ptr<pqxx::connection>> Connect(const DbConfig& config) {
  try {
    return std::make_unique<pqxx::connection>(config.ConnectionString());
  } catch (const std::exception& e) {
    std::string why = e.what();
    while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
    return Unavailable("cannot connect to PostgreSQL at " + config.host + ":" +
                       std::to_string(config.port) + ", database \"" + config.name + "\", user \"" +
                       config.user + "\": " + why);
  }
}

Status StatusFromException(const std::string& what) {
  try {
    throw;
  } catch (const pqxx::broken_connection& e) {
    return Unavailable(what + ": connection to PostgreSQL lost: " + e.what());
  } catch (const pqxx::in_doubt_error& e) {
    return Unavailable(what + ": commit outcome unknown: " + e.what());
  } catch (const pqxx::sql_error& e) {
    return Internal(what + ": " + e.what() + " (SQLSTATE " + e.sqlstate() + ")");
  } catch (const std::exception& e) {
    return Internal(what + ": " + e.what());
  }
}

Database::Database(DbConfig config, int pool_size)
    : config_(std::move(config)), pool_size_(static_cast<size_t>(pool_size)) {}

Result<std::unique_ptr<pqxx::connection>> Database::Take() {
  {
    std::lock_guard lock(mu_);
    if (!idle_.empty()) {
      auto connection = std::move(idle_.back());
      idle_.pop_back();
      return connection;
    }
  }
  return Connect(config_);
}

void Database::Give(std::unique_ptr<pqxx::connection> connection) {
  std::lock_guard lock(mu_);
  if (idle_.size() < pool_size_) idle_.push_back(std::move(connection));
}

template <class Tx>
Status Database::RunIn(const std::function<Status(Tx&)>& work, int attempts) {
  Status last;
  for (int attempt = 1; attempt <= attempts; ++attempt) {
    if (attempt > 1) std::this_thread::sleep_for(std::chrono::milliseconds(200 * (attempt - 1)));
    auto connection = Take();
    if (!connection.ok()) {
      last = connection.status();
      continue;
    }
    try {
      Tx tx(**connection);
      Status status = work(tx);
      if (!status.ok()) return status;  // the work's own verdict: rolled back, not retried
      tx.commit();
      Give(std::move(*connection));
      return Status::Ok();
    } catch (const pqxx::broken_connection&) {
      last = StatusFromException("database");
      spdlog::warn("{} (attempt {} of {})", last.message(), attempt, attempts);
    } catch (...) {
      return StatusFromException("database");
    }
  }
  return last;
}

Status Database::Run(const std::function<Status(pqxx::work&)>& work, int attempts) {
  return RunIn(work, attempts);
}

Status Database::RunUntransacted(const std::function<Status(pqxx::nontransaction&)>& work,
                                 int attempts) {
  return RunIn(work, attempts);
}

}  // namespace det::storage
