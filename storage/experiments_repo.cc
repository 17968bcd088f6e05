#include "storage/experiments_repo.h"

#include "storage/sql_support.h"

namespace det::storage {
namespace {

constexpr const char* kExperimentSelect =
    "SELECT id, name, config, state, owner_id, searcher_state, archived, det_ns(start_time),"
    " det_ns(end_time),"
    " COALESCE((SELECT username FROM users WHERE users.id = experiments.owner_id), '')"
    " FROM experiments";

ExperimentRecord ReadExperiment(const pqxx::row& row) {
  return {row[0].as<int64_t>(),     row[1].as<std::string>(),  row[2].as<std::string>(),
          row[3].as<std::string>(), Nullable<int64_t>(row[4]), BytesColumn(row[5]),
          row[6].as<bool>(),        row[7].as<int64_t>(),      Nullable<int64_t>(row[8]),
          row[9].as<std::string>()};
}

constexpr const char* kTrialSelect =
    "SELECT id, experiment_id, request_id, hparams::text, state, restarts, run_id,"
    " det_ns(start_time), det_ns(end_time) FROM trials";

TrialRecord ReadTrial(const pqxx::row& row) {
  return {row[0].as<int64_t>(),     row[1].as<int64_t>(),     row[2].as<std::string>(),
          row[3].as<std::string>(), row[4].as<std::string>(), row[5].as<int32_t>(),
          row[6].as<int32_t>(),     row[7].as<int64_t>(),     Nullable<int64_t>(row[8])};
}

constexpr const char* kCheckpointSelect =
    "SELECT uuid::text, trial_id, steps_completed, state, resources::text, metadata::text,"
    " det_ns(reported_at) FROM checkpoints";

CheckpointRecord ReadCheckpoint(const pqxx::row& row) {
  return {row[0].as<std::string>(), row[1].as<int64_t>(),     row[2].as<int64_t>(),
          row[3].as<std::string>(), row[4].as<std::string>(), row[5].as<std::string>(),
          row[6].as<int64_t>()};
}

std::string ExperimentName(int64_t id) { return "experiment " + std::to_string(id); }
std::string TrialName(int64_t id) { return "trial " + std::to_string(id); }

bool IsUuid(const std::string& text) {
  if (text.size() != 36) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? text[i] != '-' : !std::isxdigit(static_cast<unsigned char>(text[i]))) return false;
  }
  return true;
}

}  // namespace

int64_t CreateExperiment(pqxx::work& tx, const NewExperiment& experiment) {
  std::optional<pqxx::binarystring> model;
  if (experiment.model_definition) model = Bytes(*experiment.model_definition);
  auto inserted =
      model ? tx.exec_params1(
                  "INSERT INTO experiments (name, config, state, owner_id, log_retention_days,"
                  " model_definition) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
                  experiment.name, experiment.config, experiment.state, experiment.owner_id,
                  experiment.log_retention_days, *model)
            : tx.exec_params1(
                  "INSERT INTO experiments (name, config, state, owner_id, log_retention_days)"
                  " VALUES ($1, $2, $3, $4, $5) RETURNING id",
                  experiment.name, experiment.config, experiment.state, experiment.owner_id,
                  experiment.log_retention_days);
  return inserted[0].as<int64_t>();
}

Result<ExperimentRecord> GetExperiment(pqxx::work& tx, int64_t id) {
  auto result = tx.exec_params(std::string(kExperimentSelect) + " WHERE id = $1", id);
  if (result.empty()) return NotFound(ExperimentName(id) + " not found");
  return ReadExperiment(result[0]);
}

std::vector<ExperimentRecord> ListExperiments(pqxx::work& tx, const ExperimentQuery& query) {
  std::vector<ExperimentRecord> experiments;
  for (const auto& row :
       tx.exec_params(std::string(kExperimentSelect) + " WHERE (NOT $1 OR end_time IS NULL)"
                                                       " AND ($2 OR NOT archived) ORDER BY id",
                      query.only_unfinished, query.include_archived)) {
    experiments.push_back(ReadExperiment(row));
  }
  return experiments;
}

Status SetExperimentState(pqxx::work& tx, int64_t id, const std::string& state,
                          std::optional<int64_t> end_ns) {
  return ExpectUpdated(tx.exec_params("UPDATE experiments SET state = $2,"
                                      " end_time = coalesce(det_ts($3), end_time) WHERE id = $1",
                                      id, state, end_ns),
                       ExperimentName(id));
}

Status SaveSearcherState(pqxx::work& tx, int64_t id, const std::string& searcher_state) {
  return ExpectUpdated(tx.exec_params("UPDATE experiments SET searcher_state = $2 WHERE id = $1",
                                      id, Bytes(searcher_state)),
                       ExperimentName(id));
}

Status SetExperimentContinued(pqxx::work& tx, int64_t id, const std::string& config,
                              const std::string& name) {
  return ExpectUpdated(
      tx.exec_params("UPDATE experiments SET config = $2, name = $3, end_time = NULL WHERE id = $1",
                     id, config, name),
      ExperimentName(id));
}

Status SetExperimentArchived(pqxx::work& tx, int64_t id, bool archived) {
  return ExpectUpdated(
      tx.exec_params("UPDATE experiments SET archived = $2 WHERE id = $1", id, archived),
      ExperimentName(id));
}

Result<std::optional<std::string>> GetModelDefinition(pqxx::work& tx, int64_t id) {
  auto result = tx.exec_params("SELECT model_definition FROM experiments WHERE id = $1", id);
  if (result.empty()) return NotFound(ExperimentName(id) + " not found");
  return BytesColumn(result[0][0]);
}

int64_t CreateTrial(pqxx::work& tx, int64_t experiment_id, const std::string& request_id,
                    const std::string& hparams_json, const std::string& state) {
  return tx
      .exec_params1(
          "INSERT INTO trials (experiment_id, request_id, hparams, state)"
          " VALUES ($1, $2, $3::jsonb, $4) ON CONFLICT (experiment_id, request_id)"
          " DO UPDATE SET request_id = EXCLUDED.request_id RETURNING id",
          experiment_id, request_id, hparams_json, state)[0]
      .as<int64_t>();
}

int64_t NextTrialId(pqxx::work& tx) {
  return tx.exec1("SELECT nextval(pg_get_serial_sequence('trials', 'id'))")[0].as<int64_t>();
}

Status InsertTrial(pqxx::work& tx, int64_t id, int64_t experiment_id, const std::string& request_id,
                   const std::string& hparams_json, const std::string& state) {
  const auto inserted = tx.exec_params(
      "INSERT INTO trials (id, experiment_id, request_id, hparams, state)"
      " VALUES ($1, $2, $3, $4::jsonb, $5) ON CONFLICT (experiment_id, request_id) DO NOTHING",
      id, experiment_id, request_id, hparams_json, state);
  if (inserted.affected_rows() == 0) {
    return AlreadyExists("experiment " + std::to_string(experiment_id) +
                         " already has a trial for request " + request_id);
  }
  return Status::Ok();
}

Result<TrialRecord> GetTrial(pqxx::work& tx, int64_t id) {
  auto result = tx.exec_params(std::string(kTrialSelect) + " WHERE id = $1", id);
  if (result.empty()) return NotFound(TrialName(id) + " not found");
  return ReadTrial(result[0]);
}

Status SetTrialMetadata(pqxx::work& tx, int64_t id, const std::string& metadata_json) {
  return ExpectUpdated(
      tx.exec_params("UPDATE trials SET metadata = $2::jsonb WHERE id = $1", id, metadata_json),
      TrialName(id));
}

Result<std::string> GetTrialMetadata(pqxx::work& tx, int64_t id) {
  auto result = tx.exec_params("SELECT metadata::text FROM trials WHERE id = $1", id);
  if (result.empty()) return NotFound(TrialName(id) + " not found");
  return result[0][0].as<std::string>();
}

std::vector<TrialRecord> ListTrials(pqxx::work& tx, int64_t experiment_id) {
  std::vector<TrialRecord> trials;
  for (const auto& row : tx.exec_params(
           std::string(kTrialSelect) + " WHERE experiment_id = $1 ORDER BY id", experiment_id)) {
    trials.push_back(ReadTrial(row));
  }
  return trials;
}

Status SetTrialState(pqxx::work& tx, int64_t id, const std::string& state,
                     std::optional<int64_t> end_ns) {
  return ExpectUpdated(tx.exec_params("UPDATE trials SET state = $2,"
                                      " end_time = coalesce(det_ts($3), end_time) WHERE id = $1",
                                      id, state, end_ns),
                       TrialName(id));
}

Status UpdateTrial(pqxx::work& tx, int64_t id, const std::string& state, int32_t restarts,
                   int32_t run_id, std::optional<int64_t> end_ns) {
  return ExpectUpdated(tx.exec_params("UPDATE trials SET state = $2, restarts = $3, run_id = $4,"
                                      " end_time = det_ts($5) WHERE id = $1",
                                      id, state, restarts, run_id, end_ns),
                       TrialName(id));
}

Result<int32_t> RecordTrialRestart(pqxx::work& tx, int64_t id) {
  auto result = tx.exec_params(
      "UPDATE trials SET restarts = restarts + 1 WHERE id = $1 RETURNING restarts", id);
  if (result.empty()) return NotFound(TrialName(id) + " not found");
  return result[0][0].as<int32_t>();
}

Result<int32_t> StartTrialRun(pqxx::work& tx, int64_t id) {
  auto result =
      tx.exec_params("UPDATE trials SET run_id = run_id + 1 WHERE id = $1 RETURNING run_id", id);
  if (result.empty()) return NotFound(TrialName(id) + " not found");
  return result[0][0].as<int32_t>();
}

Status SaveCheckpoint(pqxx::work& tx, const CheckpointRecord& checkpoint) {
  if (!IsUuid(checkpoint.uuid)) {
    return InvalidArgument("checkpoint uuid \"" + checkpoint.uuid + "\" is not a UUID");
  }
  // A repeat by the same trial updates its record; another trial's uuid is not the caller's.
  const pqxx::result saved = tx.exec_params(
      "INSERT INTO checkpoints (uuid, trial_id, steps_completed, state, resources, metadata)"
      " VALUES ($1::uuid, $2, $3, $4, $5::jsonb, $6::jsonb) ON CONFLICT (uuid) DO UPDATE SET"
      " state = EXCLUDED.state, resources = EXCLUDED.resources, metadata = EXCLUDED.metadata"
      " WHERE checkpoints.trial_id = EXCLUDED.trial_id",
      checkpoint.uuid, checkpoint.trial_id, checkpoint.steps_completed, checkpoint.state,
      checkpoint.resources_json, checkpoint.metadata_json);
  if (saved.affected_rows() == 0) {
    return AlreadyExists("checkpoint " + checkpoint.uuid + " belongs to another trial");
  }
  return Status::Ok();
}

Status SetCheckpointState(pqxx::work& tx, const std::string& uuid, const std::string& state) {
  if (!IsUuid(uuid)) return InvalidArgument("checkpoint uuid \"" + uuid + "\" is not a UUID");
  return ExpectUpdated(
      tx.exec_params("UPDATE checkpoints SET state = $2 WHERE uuid = $1::uuid", uuid, state),
      "checkpoint " + uuid);
}

std::vector<CheckpointRecord> ListCheckpoints(pqxx::work& tx, int64_t trial_id) {
  std::vector<CheckpointRecord> checkpoints;
  for (const auto& row : tx.exec_params(
           std::string(kCheckpointSelect) + " WHERE trial_id = $1 ORDER BY steps_completed, uuid",
           trial_id)) {
    checkpoints.push_back(ReadCheckpoint(row));
  }
  return checkpoints;
}

std::optional<CheckpointRecord> FindCheckpoint(pqxx::work& tx, const std::string& uuid) {
  // Compared as text: a malformed uuid finds nothing rather than failing the cast.
  auto result =
      tx.exec_params(std::string(kCheckpointSelect) + " WHERE uuid::text = $1 LIMIT 1", uuid);
  if (result.empty()) return std::nullopt;
  return ReadCheckpoint(result[0]);
}

Status SetCheckpointMetadata(pqxx::work& tx, const std::string& uuid,
                             const std::string& metadata_json) {
  if (!IsUuid(uuid)) return NotFound("checkpoint " + uuid + " not found");
  return ExpectUpdated(
      tx.exec_params("UPDATE checkpoints SET metadata = $2::jsonb WHERE uuid = $1::uuid", uuid,
                     metadata_json),
      "checkpoint " + uuid);
}

std::optional<CheckpointRecord> LatestCheckpoint(pqxx::work& tx, int64_t trial_id) {
  auto result = tx.exec_params(std::string(kCheckpointSelect) +
                                   " WHERE trial_id = $1 AND state = 'COMPLETED' AND NOT removing"
                                   " ORDER BY steps_completed DESC, reported_at DESC LIMIT 1",
                               trial_id);
  if (result.empty()) return std::nullopt;
  return ReadCheckpoint(result[0]);
}

std::vector<ScoredCheckpoint> ListScoredCheckpoints(pqxx::work& tx, int64_t experiment_id,
                                                    const std::string& metric) {
  std::vector<ScoredCheckpoint> checkpoints;
  for (const auto& row :
       tx.exec_params("SELECT c.uuid, c.trial_id, c.steps_completed,"
                      " CASE WHEN jsonb_typeof(m.metrics -> $2) = 'number'"
                      " THEN (m.metrics ->> $2)::float8 END"
                      " FROM checkpoints c JOIN trials t ON t.id = c.trial_id"
                      " LEFT JOIN metrics m ON m.trial_id = c.trial_id AND m.kind = 'validation'"
                      " AND m.step = c.steps_completed"
                      " WHERE t.experiment_id = $1 AND c.state = 'COMPLETED'"
                      " AND NOT EXISTS (SELECT 1 FROM model_versions v"
                      " WHERE v.checkpoint_uuid = c.uuid)"
                      " ORDER BY c.trial_id, c.steps_completed, c.uuid",
                      experiment_id, metric)) {
    ScoredCheckpoint checkpoint{row[0].as<std::string>(), row[1].as<int64_t>(),
                                row[2].as<int64_t>(), std::nullopt};
    if (!row[3].is_null()) checkpoint.metric = row[3].as<double>();
    checkpoints.push_back(std::move(checkpoint));
  }
  return checkpoints;
}

CheckpointTotals ExperimentCheckpointTotals(pqxx::work& tx, int64_t experiment_id) {
  auto totals = ExperimentCheckpointTotals(tx, std::vector<int64_t>{experiment_id});
  return totals.count(experiment_id) ? totals.at(experiment_id) : CheckpointTotals{};
}

std::map<int64_t, CheckpointTotals> ExperimentCheckpointTotals(
    pqxx::work& tx, const std::vector<int64_t>& experiment_ids) {
  std::map<int64_t, CheckpointTotals> totals;
  // A checkpoint's size: the sum of its resources' sizes (file -> bytes).
  for (const auto& row : tx.exec_params(
           "SELECT t.experiment_id, count(*), coalesce(sum((SELECT coalesce(sum(CASE WHEN"
           " jsonb_typeof(r.value) = 'number' THEN (r.value)::text::numeric END), 0)"
           " FROM jsonb_each(c.resources) r)), 0)::bigint"
           " FROM checkpoints c JOIN trials t ON t.id = c.trial_id"
           " WHERE t.experiment_id = ANY($1::bigint[])"
           " AND c.state IN ('COMPLETED', 'PARTIALLY_DELETED') GROUP BY t.experiment_id",
           BigintArray(experiment_ids))) {
    totals[row[0].as<int64_t>()] = {row[1].as<int32_t>(), row[2].as<int64_t>()};
  }
  return totals;
}

Status DeleteExperiment(pqxx::work& tx, int64_t experiment_id) {
  tx.exec_params(
      "DELETE FROM task_log_chunks WHERE task_id IN (SELECT 'trial-' || t.id || '-' || r"
      " FROM trials t, generate_series(1, t.run_id) r WHERE t.experiment_id = $1)",
      experiment_id);
  tx.exec_params(
      "DELETE FROM metrics WHERE trial_id IN (SELECT id FROM trials WHERE experiment_id = $1)",
      experiment_id);
  tx.exec_params(
      "DELETE FROM metric_rollups WHERE trial_id IN"
      " (SELECT id FROM trials WHERE experiment_id = $1)",
      experiment_id);
  if (tx.exec_params("DELETE FROM experiments WHERE id = $1", experiment_id).affected_rows() == 0) {
    return NotFound("experiment " + std::to_string(experiment_id) + " not found");
  }
  return Status::Ok();
}

}  // namespace det::storage
