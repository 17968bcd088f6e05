#pragma once

#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "common/status.h"

namespace det::storage {

// One numbered SQL file from storage/migrations/, compiled into the binary.
struct Migration {
  int version;
  const char* name;
  const char* sql;
};
extern const std::vector<Migration> kMigrations;  // ascending versions

int LatestSchemaVersion();

// Brings the database's schema up to this binary's: under a transaction-scoped advisory lock (so
// concurrent masters serialise), applies every migration newer than the recorded version, in one
// transaction, recording each. A database whose schema is newer than this binary is refused with
// both versions named. Returns the schema version now in force.
Result<int> Migrate(pqxx::connection& connection);

}  // namespace det::storage
