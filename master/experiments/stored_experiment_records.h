#pragma once

#include "master/experiments/experiment_records.h"
#include "storage/database.h"

namespace det::master {

// The experiment service's records in PostgreSQL (storage/experiments_repo.h), through one
// connection of their own: each call is one transaction on the caller's thread.
class StoredExperimentRecords final : public ExperimentRecords {
 public:
  explicit StoredExperimentRecords(storage::DbConfig db) : db_(std::move(db), 1) {}

  Result<int64_t> CreateExperiment(const storage::NewExperiment& experiment) override;
  Result<std::vector<storage::ExperimentRecord>> Experiments() override;
  Result<StoredTrials> TrialsOf(int64_t experiment_id) override;
  Result<int64_t> NextTrialId() override;
  Result<std::optional<bus::AgentUserGroup>> AgentAccountOf(int64_t user_id) override;
  Status Store(const ExperimentChanges& changes) override;
  Result<std::vector<storage::ScoredCheckpoint>> ScoredCheckpoints(
      int64_t experiment_id, const std::string& metric) override;
  Result<std::optional<storage::CheckpointRecord>> Checkpoint(const std::string& uuid) override;
  Result<std::optional<storage::CheckpointRecord>> LatestCheckpointOf(int64_t trial_id) override;
  Result<std::vector<std::string>> RegisteredAmong(const std::vector<std::string>& uuids) override;
  Result<std::vector<std::string>> ClaimForRemoval(const std::vector<std::string>& uuids) override;
  Status ReleaseRemovalClaim(const std::vector<std::string>& uuids) override;
  Status CheckpointsRemoved(const std::vector<std::string>& uuids) override;
  Status DeleteExperiment(int64_t experiment_id) override;

 private:
  storage::Database db_;
};

}  // namespace det::master
