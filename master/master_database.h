#pragma once

#include <memory>

#include "master/master_config.h"
#include "storage/database.h"
#include "storage/local_postgres.h"

namespace det::master {

// The master's database, ready to use: the configured server (`db:`), or a private local one
// started in `local_db.data_dir` (stopped again when this is destroyed); its schema migrated to
// this binary's version.
class MasterDatabase {
 public:
  static Result<std::unique_ptr<MasterDatabase>> Open(const MasterDbConfig& config);

  storage::Database& db() { return *db_; }
  int schema_version() const { return schema_version_; }
  // The cluster's id: chosen at the first start and kept in the database.
  const std::string& cluster_id() const { return cluster_id_; }
  // Signs allocation tokens (AllocationTokens); the same across restarts.
  const std::string& token_secret() const { return token_secret_; }

 private:
  std::unique_ptr<storage::LocalPostgres> local_;  // declared first: destroyed last
  std::unique_ptr<storage::Database> db_;
  int schema_version_ = 0;
  std::string cluster_id_;
  std::string token_secret_;
};

}  // namespace det::master
