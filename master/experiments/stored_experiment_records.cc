#include "master/experiments/stored_experiment_records.h"

#include <spdlog/spdlog.h>

#include "storage/metrics_repo.h"
#include "storage/models_repo.h"
#include "storage/users_repo.h"

namespace det::master {
namespace {

// Every validation of a trial a restarted master replays to its search: far more than any trial
// reports.
constexpr int kMaxValidationsReplayed = 1000000;

Status WriteTrial(pqxx::work& tx, const TrialRow& row, bool created) {
  if (created) {
    return storage::InsertTrial(tx, row.id, row.experiment_id, row.request_id, row.hparams_json,
                                row.state);
  }
  return storage::UpdateTrial(tx, row.id, row.state, row.restarts, row.run_id, row.end_ns);
}

Status WriteExperiment(pqxx::work& tx, const ExperimentRow& row) {
  if (row.continued_config) {
    DET_RETURN_IF_ERROR(
        storage::SetExperimentContinued(tx, row.id, *row.continued_config, row.continued_name));
  }
  DET_RETURN_IF_ERROR(storage::SetExperimentState(tx, row.id, row.state, row.end_ns));
  return storage::SaveSearcherState(tx, row.id, row.searcher_state);
}

Status WriteAll(pqxx::work& tx, const ExperimentChanges& changes) {
  for (const TrialRow& row : changes.created) DET_RETURN_IF_ERROR(WriteTrial(tx, row, true));
  for (const TrialRow& row : changes.updated) DET_RETURN_IF_ERROR(WriteTrial(tx, row, false));
  for (const ExperimentRow& row : changes.experiments)
    DET_RETURN_IF_ERROR(WriteExperiment(tx, row));
  return Status::Ok();
}

}  // namespace

Result<int64_t> StoredExperimentRecords::CreateExperiment(
    const storage::NewExperiment& experiment) {
  int64_t id = 0;
  DET_RETURN_IF_ERROR(db_.Run([&](pqxx::work& tx) {
    id = storage::CreateExperiment(tx, experiment);
    return Status::Ok();
  }));
  return id;
}

Result<std::vector<storage::ExperimentRecord>> StoredExperimentRecords::Experiments() {
  std::vector<storage::ExperimentRecord> records;
  DET_RETURN_IF_ERROR(db_.Run([&](pqxx::work& tx) {
    records = storage::ListExperiments(tx, {});
    return Status::Ok();
  }));
  return records;
}

Result<StoredTrials> StoredExperimentRecords::TrialsOf(int64_t experiment_id) {
  StoredTrials stored;
  DET_RETURN_IF_ERROR(db_.Run([&](pqxx::work& tx) {
    stored = {};  // a retried transaction starts over
    stored.trials = storage::ListTrials(tx, experiment_id);
    for (const storage::TrialRecord& trial : stored.trials) {
      if (auto latest = storage::LatestCheckpoint(tx, trial.id)) {
        stored.latest_checkpoints[trial.id] = *latest;
      }
      for (auto& point :
           storage::ReadMetrics(tx, trial.id, "validation", 0, kMaxValidationsReplayed)) {
        stored.validations.push_back(std::move(point));
      }
    }
    return Status::Ok();
  }));
  return stored;
}

Result<int64_t> StoredExperimentRecords::NextTrialId() {
  int64_t id = 0;
  DET_RETURN_IF_ERROR(db_.Run([&](pqxx::work& tx) {
    id = storage::NextTrialId(tx);
    return Status::Ok();
  }));
  return id;
}

Result<std::optional<bus::AgentUserGroup>> StoredExperimentRecords::AgentAccountOf(
    int64_t user_id) {
  std::optional<bus::AgentUserGroup> account;
  DET_RETURN_IF_ERROR(db_.Run([&](pqxx::work& tx) {
    auto user = storage::FindUserById(tx, user_id);
    account = user.ok() ? user->agent_account : std::nullopt;
    return Status::Ok();
  }));
  return account;
}

Status StoredExperimentRecords::Store(const ExperimentChanges& changes) {
  if (changes.empty()) return Status::Ok();
  Status stored = db_.Run([&](pqxx::work& tx) { return WriteAll(tx, changes); });
  if (stored.ok() || stored.code() == StatusCode::kUnavailable) return stored;
  spdlog::error("experiments: changes not stored together ({}); storing them one by one",
                stored.message());
  auto alone = [&](const std::string& what, const std::function<Status(pqxx::work&)>& write) {
    Status written = db_.Run(write);
    if (!written.ok()) spdlog::error("{}: not stored: {}", what, written.message());
  };
  for (bool created : {true, false}) {
    for (const TrialRow& row : created ? changes.created : changes.updated) {
      alone("trial " + std::to_string(row.id),
            [&](pqxx::work& tx) { return WriteTrial(tx, row, created); });
    }
  }
  for (const ExperimentRow& row : changes.experiments) {
    alone("experiment " + std::to_string(row.id),
          [&](pqxx::work& tx) { return WriteExperiment(tx, row); });
  }
  return Status::Ok();
}

Result<std::vector<storage::ScoredCheckpoint>> StoredExperimentRecords::ScoredCheckpoints(
    int64_t experiment_id, const std::string& metric) {
  std::vector<storage::ScoredCheckpoint> scored;
  DET_RETURN_IF_ERROR(db_.Run([&](pqxx::work& tx) {
    scored = storage::ListScoredCheckpoints(tx, experiment_id, metric);
    return Status::Ok();
  }));
  return scored;
}

Result<std::optional<storage::CheckpointRecord>> StoredExperimentRecords::Checkpoint(
    const std::string& uuid) {
  std::optional<storage::CheckpointRecord> found;
  DET_RETURN_IF_ERROR(db_.Run([&](pqxx::work& tx) {
    found = storage::FindCheckpoint(tx, uuid);
    return Status::Ok();
  }));
  return found;
}

Result<std::optional<storage::CheckpointRecord>> StoredExperimentRecords::LatestCheckpointOf(
    int64_t trial_id) {
  std::optional<storage::CheckpointRecord> latest;
  DET_RETURN_IF_ERROR(db_.Run([&](pqxx::work& tx) {
    latest = storage::LatestCheckpoint(tx, trial_id);
    return Status::Ok();
  }));
  return latest;
}

Result<std::vector<std::string>> StoredExperimentRecords::RegisteredAmong(
    const std::vector<std::string>& uuids) {
  return storage::Transact<std::vector<std::string>>(
      db_, [&](pqxx::work& tx) -> Result<std::vector<std::string>> {
        return storage::RegisteredAmong(tx, uuids);
      });
}

Result<std::vector<std::string>> StoredExperimentRecords::ClaimForRemoval(
    const std::vector<std::string>& uuids) {
  return storage::Transact<std::vector<std::string>>(
      db_, [&](pqxx::work& tx) -> Result<std::vector<std::string>> {
        return storage::ClaimForRemoval(tx, uuids);
      });
}

Status StoredExperimentRecords::ReleaseRemovalClaim(const std::vector<std::string>& uuids) {
  return db_.Run([&](pqxx::work& tx) {
    storage::ReleaseRemovalClaim(tx, uuids);
    return Status::Ok();
  });
}

Status StoredExperimentRecords::CheckpointsRemoved(const std::vector<std::string>& uuids) {
  return db_.Run([&](pqxx::work& tx) {
    for (const std::string& uuid : uuids) {
      DET_RETURN_IF_ERROR(storage::SetCheckpointState(tx, uuid, "DELETED"));
    }
    return Status::Ok();
  });
}

Status StoredExperimentRecords::DeleteExperiment(int64_t experiment_id) {
  return db_.Run([&](pqxx::work& tx) { return storage::DeleteExperiment(tx, experiment_id); });
}

}  // namespace det::master
