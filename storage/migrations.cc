#include "storage/migrations.h"

#include <spdlog/spdlog.h>

#include "storage/database.h"

namespace det::storage {
namespace {

// pg_advisory_xact_lock key: "det-migr" as 8 bytes.
constexpr int64_t kMigrationLock = 0x6465742d6d696772;

}  // namespace

int LatestSchemaVersion() { return kMigrations.empty() ? 0 : kMigrations.back().version; }

Result<int> Migrate(pqxx::connection& connection) {
  try {
    pqxx::work tx(connection);
    tx.exec_params("SELECT pg_advisory_xact_lock($1)", kMigrationLock);
    tx.exec0(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        " version integer PRIMARY KEY, name text NOT NULL,"
        " applied_at timestamptz NOT NULL DEFAULT now())");
    const int current =
        tx.exec1("SELECT coalesce(max(version), 0) FROM schema_migrations")[0].as<int>();
    const int latest = LatestSchemaVersion();
    if (current > latest) {
      return FailedPrecondition("the database schema is at version " + std::to_string(current) +
                                ", newer than this det-master knows (" + std::to_string(latest) +
                                "); run a det-master at least as new as the one that migrated it");
    }
    for (const Migration& m : kMigrations) {
      if (m.version <= current) continue;
      tx.exec0(m.sql);
      tx.exec_params("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", m.version,
                     std::string(m.name));
      spdlog::info("database: applied migration {}", m.name);
    }
    tx.commit();
    return latest;
  } catch (...) {
    return StatusFromException("database migration");
  }
}

}  // namespace det::storage
