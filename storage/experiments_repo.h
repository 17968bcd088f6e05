#pragma once

// Experiments, their trials and the trials' checkpoints.
//
// Functions take the caller's transaction (Database::Run). Times are Unix nanoseconds. States are
// the state machines' names (the master owns them); the repository stores what it is given.

#include <cstdint>
#include <map>
#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "common/status.h"

namespace det::storage {

struct NewExperiment {
  std::string name;
  std::string config;  // the experiment YAML as submitted
  std::string state;
  std::optional<int64_t> owner_id;
  std::optional<std::string> model_definition;  // a tar.gz of the model folder
  // retention_policy.log_retention_days: overrides the cluster's for the experiment's trials.
  std::optional<int> log_retention_days;
};

struct ExperimentRecord {
  int64_t id = 0;
  std::string name;
  std::string config;
  std::string state;
  std::optional<int64_t> owner_id;
  std::optional<std::string> searcher_state;
  bool archived = false;
  int64_t start_ns = 0;
  std::optional<int64_t> end_ns;
  std::string owner;  // the owner's username ("" for none)
};

struct ExperimentQuery {
  bool only_unfinished = false;  // end time not set: what a restarted master resumes
  bool include_archived = true;
};

int64_t CreateExperiment(pqxx::work& tx, const NewExperiment& experiment);
Result<ExperimentRecord> GetExperiment(pqxx::work& tx, int64_t id);  // NotFound
std::vector<ExperimentRecord> ListExperiments(pqxx::work& tx, const ExperimentQuery& query);
// `end_ns` set marks the experiment finished.
Status SetExperimentState(pqxx::work& tx, int64_t id, const std::string& state,
                          std::optional<int64_t> end_ns);
Status SaveSearcherState(pqxx::work& tx, int64_t id, const std::string& searcher_state);
// A continued experiment (Determined's ContinueExperiment): its config is now `config` (its name
// `name`, which an override may have changed), and it is no longer over (end time cleared: a
// restarted master resumes it).
Status SetExperimentContinued(pqxx::work& tx, int64_t id, const std::string& config,
                              const std::string& name);
Status SetExperimentArchived(pqxx::work& tx, int64_t id, bool archived);
Result<std::optional<std::string>> GetModelDefinition(pqxx::work& tx, int64_t id);

struct TrialRecord {
  int64_t id = 0;
  int64_t experiment_id = 0;
  std::string request_id;  // the searcher's id for the trial, unique in its experiment
  std::string hparams_json = "{}";
  std::string state;
  int32_t restarts = 0;
  int32_t run_id = 0;
  int64_t start_ns = 0;
  std::optional<int64_t> end_ns;
};

// Idempotent: creating the same (experiment, request id) again returns the first trial's id.
int64_t CreateTrial(pqxx::work& tx, int64_t experiment_id, const std::string& request_id,
                    const std::string& hparams_json, const std::string& state);
// A trial id from the trials' sequence, for a row InsertTrial writes later (in the transaction
// that also stores the search that asked for it). AlreadyExists when the experiment has a trial
// of that request id.
int64_t NextTrialId(pqxx::work& tx);
Status InsertTrial(pqxx::work& tx, int64_t id, int64_t experiment_id, const std::string& request_id,
                   const std::string& hparams_json, const std::string& state);
Result<TrialRecord> GetTrial(pqxx::work& tx, int64_t id);  // NotFound
std::vector<TrialRecord> ListTrials(pqxx::work& tx, int64_t experiment_id);
Status SetTrialState(pqxx::work& tx, int64_t id, const std::string& state,
                     std::optional<int64_t> end_ns);
// State, restarts and run as the master tracks them; end_ns set marks the trial over, unset not
// (a continued trial's end time goes).
Status UpdateTrial(pqxx::work& tx, int64_t id, const std::string& state, int32_t restarts,
                   int32_t run_id, std::optional<int64_t> end_ns);
// Determined's run metadata: a JSON object (text) per trial, replaced whole. NotFound for an
// unknown trial.
Status SetTrialMetadata(pqxx::work& tx, int64_t id, const std::string& metadata_json);
Result<std::string> GetTrialMetadata(pqxx::work& tx, int64_t id);
Result<int32_t> RecordTrialRestart(pqxx::work& tx, int64_t id);  // returns the new count
Result<int32_t> StartTrialRun(pqxx::work& tx, int64_t id);       // returns the new run id

struct CheckpointRecord {
  std::string uuid;
  int64_t trial_id = 0;
  int64_t steps_completed = 0;
  std::string state;                  // e.g. ACTIVE, COMPLETED, DELETED
  std::string resources_json = "{}";  // file name -> size
  std::string metadata_json = "{}";
  int64_t reported_ns = 0;  // set by the database
};

// Adds the checkpoint, or (a report sent again, or a state change) updates its state, resources
// and metadata. InvalidArgument when the uuid is malformed; AlreadyExists when the uuid is
// another trial's checkpoint (which is left as it was).
Status SaveCheckpoint(pqxx::work& tx, const CheckpointRecord& checkpoint);
Status SetCheckpointState(pqxx::work& tx, const std::string& uuid, const std::string& state);
std::vector<CheckpointRecord> ListCheckpoints(pqxx::work& tx, int64_t trial_id);  // by steps
// The checkpoint `uuid` (none for an unknown or malformed uuid).
std::optional<CheckpointRecord> FindCheckpoint(pqxx::work& tx, const std::string& uuid);
// Replaces the checkpoint's user metadata (a JSON object, as text); NotFound for an unknown uuid.
Status SetCheckpointMetadata(pqxx::work& tx, const std::string& uuid,
                             const std::string& metadata_json);
// The COMPLETED checkpoint with the most steps that is not being removed: where a restarted or
// continued trial resumes.
std::optional<CheckpointRecord> LatestCheckpoint(pqxx::work& tx, int64_t trial_id);

// A COMPLETED checkpoint of an experiment with the value of `metric` in its trial's validation
// at the same step (none when there is no such validation or the value is not a number).
// Checkpoints registered in the model registry (models_repo.h) are left out: what garbage
// collection and an experiment's deletion remove is chosen from these, and never removes them.
struct ScoredCheckpoint {
  std::string uuid;
  int64_t trial_id = 0;
  int64_t steps_completed = 0;
  std::optional<double> metric;
};
std::vector<ScoredCheckpoint> ListScoredCheckpoints(pqxx::work& tx, int64_t experiment_id,
                                                    const std::string& metric);

// Determined's checkpointCount and checkpointSize of an experiment: its checkpoints that still
// have files (COMPLETED, PARTIALLY_DELETED) and the sum of their files' sizes, in one query.
struct CheckpointTotals {
  int32_t count = 0;
  int64_t bytes = 0;
};
CheckpointTotals ExperimentCheckpointTotals(pqxx::work& tx, int64_t experiment_id);
// The same for many experiments in one query (an experiment without such checkpoints is absent).
std::map<int64_t, CheckpointTotals> ExperimentCheckpointTotals(
    pqxx::work& tx, const std::vector<int64_t>& experiment_ids);

// Removes the experiment with its trials, their checkpoint rows, metrics and run logs.
Status DeleteExperiment(pqxx::work& tx, int64_t experiment_id);

}  // namespace det::storage
