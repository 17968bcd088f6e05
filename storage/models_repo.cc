#include "storage/models_repo.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "storage/sql_support.h"

namespace det::storage {
namespace {

constexpr const char* kModelColumns =
    "m.id, m.name, m.description, m.metadata::text, m.labels::text, m.notes, m.archived,"
    " m.workspace_id, m.user_id, coalesce(u.username, ''), det_ns(m.created_at),"
    " det_ns(m.updated_at), (SELECT count(*) FROM model_versions v WHERE v.model_id = m.id)";
constexpr const char* kModelTables = " FROM models m LEFT JOIN users u ON u.id = m.user_id";

ModelRecord ReadModel(const pqxx::row& row) {
  return ModelRecord{row[0].as<int64_t>(),     row[1].as<std::string>(), row[2].as<std::string>(),
                     row[3].as<std::string>(), row[4].as<std::string>(), row[5].as<std::string>(),
                     row[6].as<bool>(),        row[7].as<int32_t>(),     Nullable<int64_t>(row[8]),
                     row[9].as<std::string>(), row[10].as<int64_t>(),    row[11].as<int64_t>(),
                     row[12].as<int32_t>()};
}

constexpr const char* kVersionColumns =
    "v.id, v.model_id, v.version, v.checkpoint_uuid::text, v.checkpoint::text, v.name,"
    " v.comment, v.metadata::text, v.labels::text, v.notes, v.user_id,"
    " coalesce(u.username, ''), det_ns(v.created_at), det_ns(v.updated_at)";
constexpr const char* kVersionTables =
    " FROM model_versions v LEFT JOIN users u ON u.id = v.user_id";

ModelVersionRecord ReadVersion(const pqxx::row& row) {
  return ModelVersionRecord{
      row[0].as<int64_t>(),     row[1].as<int64_t>(),       row[2].as<int32_t>(),
      row[3].as<std::string>(), row[4].as<std::string>(),   row[5].as<std::string>(),
      row[6].as<std::string>(), row[7].as<std::string>(),   row[8].as<std::string>(),
      row[9].as<std::string>(), Nullable<int64_t>(row[10]), row[11].as<std::string>(),
      row[12].as<int64_t>(),    row[13].as<int64_t>()};
}

bool AllDigits(const std::string& text) {
  return !text.empty() && text.size() < 19 &&
         text.find_first_not_of("0123456789") == std::string::npos;
}

// A list as a JSON array's text, for `jsonb_array_elements_text($n::jsonb)`.
template <typename T>
std::string JsonList(const std::vector<T>& values) {
  return nlohmann::json(values).dump();
}

// ORDER BY for a model list's sort key (a fixed set: never the caller's text).
std::string ModelOrder(const std::string& sort_by, bool descending) {
  std::string column = "m.id";
  if (sort_by == "name") column = "m.name";
  if (sort_by == "description") column = "m.description";
  if (sort_by == "created") column = "m.created_at";
  if (sort_by == "updated") column = "m.updated_at";
  if (sort_by == "versions") column = "13";
  if (sort_by == "workspace") column = "m.workspace_id";
  const std::string direction = descending ? " DESC" : " ASC";
  return " ORDER BY " + column + direction + ", m.id" + direction;
}

// A unique violation as AlreadyExists naming the model; anything else rethrown.
template <typename Fn>
auto NamingTakenModel(const std::string& name, Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const pqxx::unique_violation&) {
    return AlreadyExists("a model named \"" + name + "\" already exists");
  }
}

}  // namespace

Result<int64_t> CreateModel(pqxx::work& tx, const NewModel& model) {
  auto result = tx.exec_params(
      "INSERT INTO models (name, description, metadata, labels, notes, workspace_id, user_id)"
      " VALUES ($1, $2, $3::jsonb, $4::jsonb, $5, $6, $7)"
      " ON CONFLICT (name) DO NOTHING RETURNING id",
      model.name, model.description, model.metadata_json, model.labels_json, model.notes,
      model.workspace_id, model.user_id);
  if (result.empty()) return AlreadyExists("a model named \"" + model.name + "\" already exists");
  return result[0][0].as<int64_t>();
}

Result<ModelRecord> FindModel(pqxx::work& tx, const std::string& identifier) {
  const bool by_id = AllDigits(identifier);
  auto result = tx.exec_params(std::string("SELECT ") + kModelColumns + kModelTables +
                                   (by_id ? " WHERE m.id = $1::bigint" : " WHERE m.name = $1"),
                               identifier);
  if (result.empty()) {
    return NotFound(by_id ? "model " + identifier + " not found"
                          : "model \"" + identifier + "\" not found");
  }
  return ReadModel(result[0]);
}

// ListModels' filters: $1..$8 as it passes them.
constexpr const char* kModelFilter =
    " WHERE ($1 = '' OR strpos(lower(m.name), lower($1)) > 0)"
    " AND ($2 = '' OR strpos(lower(m.description), lower($2)) > 0)"
    " AND m.labels @> $3::jsonb"
    " AND ($4::boolean IS NULL OR m.archived = $4)"
    " AND ($5::bigint IS NULL OR m.id = $5)"
    " AND ($6 = '[]' OR m.user_id IN (SELECT jsonb_array_elements_text($6::jsonb)::bigint))"
    " AND ($7 = '[]' OR u.username IN (SELECT jsonb_array_elements_text($7::jsonb)))"
    " AND ($8 = '[]' OR m.workspace_id IN"
    " (SELECT jsonb_array_elements_text($8::jsonb)::integer))";

ModelList ListModels(pqxx::work& tx, const ModelQuery& query) {
  auto filtered = [&](const std::string& select, const std::string& tail, auto... more) {
    return tx.exec_params(select + kModelTables + kModelFilter + tail, query.name,
                          query.description, JsonList(query.labels), query.archived, query.id,
                          JsonList(query.user_ids), JsonList(query.usernames),
                          JsonList(query.workspace_ids), more...);
  };
  ModelList list;
  list.total = filtered("SELECT count(*)", "")[0][0].as<int64_t>();
  const int64_t start = query.offset >= 0 ? std::min(query.offset, list.total)
                                          : std::max<int64_t>(0, list.total + query.offset);
  const std::optional<int64_t> limit =
      query.limit > 0 ? std::optional<int64_t>(query.limit) : std::nullopt;
  for (const auto& row : filtered(
           std::string("SELECT ") + kModelColumns,
           ModelOrder(query.sort_by, query.descending) + " OFFSET $9 LIMIT $10", start, limit)) {
    list.models.push_back(ReadModel(row));
  }
  return list;
}

Status UpdateModel(pqxx::work& tx, int64_t model_id, const ModelChange& change) {
  return NamingTakenModel(change.name.value_or(""), [&]() -> Status {
    return ExpectUpdated(
        tx.exec_params("UPDATE models SET name = coalesce($2, name),"
                       " description = coalesce($3, description),"
                       " metadata = coalesce($4::jsonb, metadata),"
                       " labels = coalesce($5::jsonb, labels), notes = coalesce($6, notes),"
                       " archived = coalesce($7, archived),"
                       " workspace_id = coalesce($8, workspace_id), updated_at = now()"
                       " WHERE id = $1",
                       model_id, change.name, change.description, change.metadata_json,
                       change.labels_json, change.notes, change.archived, change.workspace_id),
        "model " + std::to_string(model_id));
  });
}

Status DeleteModel(pqxx::work& tx, int64_t model_id) {
  return ExpectUpdated(tx.exec_params("DELETE FROM models WHERE id = $1", model_id),
                       "model " + std::to_string(model_id));
}

std::vector<std::string> ListModelLabels(pqxx::work& tx) {
  std::vector<std::string> labels;
  for (const auto& row : tx.exec("SELECT l FROM models m, jsonb_array_elements_text(m.labels) l"
                                 " GROUP BY l ORDER BY count(*) DESC, l")) {
    labels.push_back(row[0].as<std::string>());
  }
  return labels;
}

Result<ModelVersionRecord> CreateModelVersion(pqxx::work& tx, int64_t model_id,
                                              const NewModelVersion& version) {
  if (tx.exec_params("SELECT 1 FROM models WHERE id = $1 FOR UPDATE", model_id).empty()) {
    return NotFound("model " + std::to_string(model_id) + " not found");
  }
  auto inserted = tx.exec_params(
      "INSERT INTO model_versions (model_id, version, checkpoint_uuid, checkpoint, storage, name,"
      " comment, metadata, labels, notes, user_id)"
      " SELECT $1, coalesce(max(version), 0) + 1, $2::uuid, $3::jsonb, $4::jsonb, $5, $6,"
      " $7::jsonb, $8::jsonb, $9, $10 FROM model_versions WHERE model_id = $1"
      " RETURNING version",
      model_id, version.checkpoint_uuid, version.checkpoint_json, version.storage_json,
      version.name, version.comment, version.metadata_json, version.labels_json, version.notes,
      version.user_id);
  tx.exec_params("UPDATE models SET updated_at = now() WHERE id = $1", model_id);
  return FindModelVersion(tx, model_id, inserted[0][0].as<int32_t>());
}

std::vector<ModelVersionRecord> ListModelVersions(pqxx::work& tx, int64_t model_id, bool by_created,
                                                  bool descending, int64_t start, int64_t limit) {
  const std::string direction = descending ? " DESC" : " ASC";
  std::vector<ModelVersionRecord> versions;
  for (const auto& row : tx.exec_params(
           std::string("SELECT ") + kVersionColumns + kVersionTables +
               " WHERE v.model_id = $1 ORDER BY " + (by_created ? "v.created_at" : "v.version") +
               direction + ", v.version" + direction + " OFFSET $2 LIMIT $3",
           model_id, start, limit > 0 ? std::optional<int64_t>(limit) : std::nullopt)) {
    versions.push_back(ReadVersion(row));
  }
  return versions;
}

Result<ModelVersionRecord> FindModelVersion(pqxx::work& tx, int64_t model_id, int32_t version) {
  auto result = tx.exec_params(std::string("SELECT ") + kVersionColumns + kVersionTables +
                                   " WHERE v.model_id = $1 AND v.version = $2",
                               model_id, version);
  if (result.empty()) {
    return NotFound("version " + std::to_string(version) + " of model " + std::to_string(model_id) +
                    " not found");
  }
  return ReadVersion(result[0]);
}

Status UpdateModelVersion(pqxx::work& tx, int64_t model_id, int32_t version,
                          const ModelVersionChange& change) {
  return ExpectUpdated(
      tx.exec_params("UPDATE model_versions SET name = coalesce($3, name),"
                     " comment = coalesce($4, comment),"
                     " metadata = coalesce($5::jsonb, metadata),"
                     " labels = coalesce($6::jsonb, labels), notes = coalesce($7, notes),"
                     " updated_at = now() WHERE model_id = $1 AND version = $2",
                     model_id, version, change.name, change.comment, change.metadata_json,
                     change.labels_json, change.notes),
      "version " + std::to_string(version) + " of model " + std::to_string(model_id));
}

Status DeleteModelVersion(pqxx::work& tx, int64_t model_id, int32_t version) {
  return ExpectUpdated(
      tx.exec_params("DELETE FROM model_versions WHERE model_id = $1 AND version = $2", model_id,
                     version),
      "version " + std::to_string(version) + " of model " + std::to_string(model_id));
}

std::optional<RegisteredCheckpoint> FindRegisteredCheckpoint(pqxx::work& tx,
                                                             const std::string& uuid) {
  auto result = tx.exec_params(
      "SELECT checkpoint::text, storage::text FROM model_versions"
      " WHERE checkpoint_uuid::text = lower($1) ORDER BY id DESC LIMIT 1",
      uuid);
  if (result.empty()) return std::nullopt;
  return RegisteredCheckpoint{result[0][0].as<std::string>(), result[0][1].as<std::string>()};
}

std::vector<std::string> RegisteredAmong(pqxx::work& tx, const std::vector<std::string>& uuids) {
  std::vector<std::string> registered;
  for (const auto& row : tx.exec_params(
           "SELECT DISTINCT checkpoint_uuid::text FROM model_versions WHERE checkpoint_uuid::text"
           " IN (SELECT lower(jsonb_array_elements_text($1::jsonb)))",
           JsonList(uuids))) {
    registered.push_back(row[0].as<std::string>());
  }
  return registered;
}

namespace {

// The rows of `uuids` locked, in one order (two claims never wait on each other in a circle).
void LockCheckpointRows(pqxx::work& tx, const std::string& uuids_json) {
  tx.exec_params(
      "SELECT 1 FROM checkpoints WHERE uuid::text IN"
      " (SELECT lower(jsonb_array_elements_text($1::jsonb))) ORDER BY uuid FOR UPDATE",
      uuids_json);
}

}  // namespace

std::vector<std::string> ClaimForRemoval(pqxx::work& tx, const std::vector<std::string>& uuids) {
  const std::string list = JsonList(uuids);
  LockCheckpointRows(tx, list);
  // A statement of its own, after the locks: its snapshot sees every registration committed
  // before them.
  std::vector<std::string> claimed;
  for (const auto& row :
       tx.exec_params("UPDATE checkpoints c SET removing = true WHERE c.uuid::text IN"
                      " (SELECT lower(jsonb_array_elements_text($1::jsonb))) AND NOT EXISTS"
                      " (SELECT 1 FROM model_versions v WHERE v.checkpoint_uuid = c.uuid)"
                      " RETURNING c.uuid::text",
                      list)) {
    claimed.push_back(row[0].as<std::string>());
  }
  return claimed;
}

void ReleaseRemovalClaim(pqxx::work& tx, const std::vector<std::string>& uuids) {
  tx.exec_params(
      "UPDATE checkpoints SET removing = false WHERE uuid::text IN"
      " (SELECT lower(jsonb_array_elements_text($1::jsonb))) AND state <> 'DELETED'",
      JsonList(uuids));
}

Status LockForRegistration(pqxx::work& tx, const std::string& uuid) {
  auto row = tx.exec_params(
      "SELECT state, removing FROM checkpoints WHERE uuid::text = lower($1) FOR UPDATE", uuid);
  if (row.empty()) {
    // Its experiment deleted, its files kept by the model versions that register it.
    if (!RegisteredAmong(tx, {uuid}).empty()) return Status::Ok();
    return NotFound("checkpoint " + uuid + " not found");
  }
  const std::string state = row[0][0].as<std::string>();
  if (state != "COMPLETED" && state != "PARTIALLY_DELETED") {
    return FailedPrecondition("checkpoint " + uuid + " is " + state +
                              ": only a COMPLETED one can be registered");
  }
  if (row[0][1].as<bool>()) {
    return FailedPrecondition("checkpoint " + uuid +
                              " is being removed (its experiment's checkpoint_storage.save_* did"
                              " not keep it, or it was deleted): register another");
  }
  return Status::Ok();
}

}  // namespace det::storage
