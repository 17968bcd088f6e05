#include "master/master_database.h"

#include <spdlog/spdlog.h>

#include "bus/rpc_client.h"
#include "master/auth/allocation_token.h"
#include "storage/agents_repo.h"
#include "storage/migrations.h"

namespace det::master {

Result<std::unique_ptr<MasterDatabase>> MasterDatabase::Open(const MasterDbConfig& config) {
  auto opened = std::make_unique<MasterDatabase>();
  storage::DbConfig db;
  if (config.db) {
    db = *config.db;
  } else {
    auto local = storage::LocalPostgres::Start({config.local_data_dir});
    if (!local.ok()) return local.status().WithContext("local_db");
    opened->local_ = std::move(*local);
    db = opened->local_->db();
  }
  DET_ASSIGN_OR_RETURN(auto connection, storage::Connect(db));
  DET_ASSIGN_OR_RETURN(opened->schema_version_, storage::Migrate(*connection));
  spdlog::info("database {} at schema version {}", db.Describe(), opened->schema_version_);
  opened->db_ = std::make_unique<storage::Database>(db);
  DET_RETURN_IF_ERROR(opened->db_->Run([&](pqxx::work& tx) {
    opened->cluster_id_ = storage::EnsureClusterId(tx, bus::RandomId());
    opened->token_secret_ = storage::EnsureTokenSecret(tx, AllocationTokens::NewSecret());
    return Status::Ok();
  }));
  return opened;
}

}  // namespace det::master
