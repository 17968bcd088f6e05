#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bus/catalog/workload.h"
#include "common/status.h"
#include "storage/experiments_repo.h"
#include "storage/ingest_writer.h"

namespace det::master {

// A trial's row as the experiment service writes it.
struct TrialRow {
  int64_t id = 0;
  int64_t experiment_id = 0;
  std::string request_id;
  std::string hparams_json = "{}";
  std::string state;
  int32_t restarts = 0;
  int32_t run_id = 0;
  std::optional<int64_t> end_ns;  // set: the trial is over (unset: not, or not any more)
};

// An experiment's state and its search as the experiment service writes them.
struct ExperimentRow {
  int64_t id = 0;
  std::string state;
  std::optional<int64_t> end_ns;  // set: the experiment is over
  std::string searcher_state;     // experiment::Experiment::SaveState() as JSON text
  // Set when the experiment was continued (ContinueExperiment): its config is now this text, and
  // it is no longer over (its stored end time goes).
  std::optional<std::string> continued_config;
  std::string continued_name;  // with continued_config: the name it gives
};

// What one call or one turn of the experiment service changed: stored together.
struct ExperimentChanges {
  std::vector<TrialRow> created;  // new trials' rows (ids from NextTrialId)
  std::vector<TrialRow> updated;
  std::vector<ExperimentRow> experiments;
  bool empty() const { return created.empty() && updated.empty() && experiments.empty(); }
};

// A stored experiment's trials, as a restarted master resumes them.
struct StoredTrials {
  std::vector<storage::TrialRecord> trials;
  // Trial id -> its latest checkpoint (COMPLETED, most steps).
  std::map<int64_t, storage::CheckpointRecord> latest_checkpoints;
  std::vector<storage::MetricPoint> validations;  // every trial's, each trial's by step
};

// What the experiment service (and its checkpoint collector) records of experiments, and reads
// back when a master starts. The seam between the service and PostgreSQL:
// StoredExperimentRecords (stored_experiment_records.h) writes through a connection of its own;
// the service's unit tests use an in-memory double (tests/testing/in_memory_experiment_records.h).
//
// Errors: Unavailable when the records are out of reach (nothing was done; the caller keeps its
// changes and tries again); any other error names what was refused.
//
// Threading: called from the experiment service's thread only.
class ExperimentRecords {
 public:
  virtual ~ExperimentRecords() = default;

  // A new experiment (ACTIVE, or as `experiment.state` says): its id.
  virtual Result<int64_t> CreateExperiment(const storage::NewExperiment& experiment) = 0;
  // Every stored experiment, oldest first.
  virtual Result<std::vector<storage::ExperimentRecord>> Experiments() = 0;
  virtual Result<StoredTrials> TrialsOf(int64_t experiment_id) = 0;
  // An id for a trial whose row comes later, in the changes that store the search that asked for
  // it.
  virtual Result<int64_t> NextTrialId() = 0;
  // The account on agents the user's tasks run as (nullopt: none linked, or no such user).
  virtual Result<std::optional<bus::AgentUserGroup>> AgentAccountOf(int64_t user_id) = 0;
  // Stores every change in one transaction. When one row is refused (not Unavailable), the others
  // are stored without it and the refused rows are logged: one bad row never holds back every
  // other experiment.
  virtual Status Store(const ExperimentChanges& changes) = 0;

  // The experiment's COMPLETED checkpoints that no model version registers, each with the value
  // of `metric` at its step ("" for none).
  virtual Result<std::vector<storage::ScoredCheckpoint>> ScoredCheckpoints(
      int64_t experiment_id, const std::string& metric) = 0;
  // Checkpoint `uuid` as stored (nullopt: there is none), and trial `trial_id`'s latest by steps
  // (nullopt: it has none, or there is no such trial): where warm starts begin.
  virtual Result<std::optional<storage::CheckpointRecord>> Checkpoint(const std::string& uuid) = 0;
  virtual Result<std::optional<storage::CheckpointRecord>> LatestCheckpointOf(int64_t trial_id) = 0;
  // Which of `uuids` a model version registers (model_registry.h): those are never removed.
  virtual Result<std::vector<std::string>> RegisteredAmong(
      const std::vector<std::string>& uuids) = 0;
  // Before their files are removed: those of `uuids` no model version registers, now marked as
  // being removed (a registration after this is refused; storage::ClaimForRemoval).
  virtual Result<std::vector<std::string>> ClaimForRemoval(
      const std::vector<std::string>& uuids) = 0;
  // Their removal failed: they may be registered again.
  virtual Status ReleaseRemovalClaim(const std::vector<std::string>& uuids) = 0;
  // The checkpoints' files are removed: marked DELETED, all or none.
  virtual Status CheckpointsRemoved(const std::vector<std::string>& uuids) = 0;
  // The experiment's rows go, with its trials', checkpoints', metrics' and logs'.
  virtual Status DeleteExperiment(int64_t experiment_id) = 0;
};

}  // namespace det::master
