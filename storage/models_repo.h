#pragma once

// The model registry (migration 0012): models, and their versions numbered from 1, each pointing
// at a checkpoint kept as it was registered. JSON columns travel as text (objects for metadata,
// arrays of strings for labels; the caller checks their shape). Times are Unix nanoseconds.
//
// Functions take the caller's transaction, so several can be one atomic change.

#include <cstdint>
#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "common/status.h"

namespace det::storage {

struct ModelRecord {
  int64_t id = 0;
  std::string name;
  std::string description;
  std::string metadata_json = "{}";
  std::string labels_json = "[]";
  std::string notes;
  bool archived = false;
  int32_t workspace_id = 1;
  std::optional<int64_t> user_id;
  std::string username;  // "" when the user is gone
  int64_t created_ns = 0;
  int64_t updated_ns = 0;
  int32_t num_versions = 0;
};

struct NewModel {
  std::string name;
  std::string description;
  std::string metadata_json = "{}";
  std::string labels_json = "[]";
  std::string notes;
  int32_t workspace_id = 1;
  std::optional<int64_t> user_id;
};

// AlreadyExists when the name is taken.
Result<int64_t> CreateModel(pqxx::work& tx, const NewModel& model);
// By id when `identifier` is all digits, else by name (as Determined's master resolves
// /api/v1/models/{modelName}). NotFound naming it.
Result<ModelRecord> FindModel(pqxx::work& tx, const std::string& identifier);

// Which models a list holds, and in what order. Empty strings and nullopt: no filter.
struct ModelQuery {
  std::string name;                 // part of the name, any case
  std::string description;          // part of the description, any case
  std::vector<std::string> labels;  // every one of them
  std::optional<bool> archived;
  std::optional<int64_t> id;
  std::vector<int64_t> user_ids;
  std::vector<std::string> usernames;
  std::vector<int32_t> workspace_ids;
  // name, description, created, updated, versions, workspace (anything else: id).
  std::string sort_by = "id";
  bool descending = false;
  // The page, as Determined's: from `offset` (negative: that many from the end), at most `limit`
  // (0: all).
  int64_t offset = 0;
  int64_t limit = 0;
};
struct ModelList {
  std::vector<ModelRecord> models;  // the page, sorted
  int64_t total = 0;                // how many match, before paging
};
// The page read by PostgreSQL (OFFSET/LIMIT), with a count of the matches: never every model.
ModelList ListModels(pqxx::work& tx, const ModelQuery& query);

// What a change sets (nullopt: left as it is).
struct ModelChange {
  std::optional<std::string> name;
  std::optional<std::string> description;
  std::optional<std::string> metadata_json;
  std::optional<std::string> labels_json;
  std::optional<std::string> notes;
  std::optional<bool> archived;
  std::optional<int32_t> workspace_id;
};
// NotFound for an unknown model; AlreadyExists when a new name is taken.
Status UpdateModel(pqxx::work& tx, int64_t model_id, const ModelChange& change);
// The model with its versions. NotFound.
Status DeleteModel(pqxx::work& tx, int64_t model_id);
// Every label in use, the most used first.
std::vector<std::string> ListModelLabels(pqxx::work& tx);

struct ModelVersionRecord {
  int64_t id = 0;
  int64_t model_id = 0;
  int32_t version = 0;
  std::string checkpoint_uuid;
  std::string checkpoint_json;  // v1Checkpoint as it was registered
  std::string name;
  std::string comment;
  std::string metadata_json = "{}";
  std::string labels_json = "[]";
  std::string notes;
  std::optional<int64_t> user_id;
  std::string username;
  int64_t created_ns = 0;
  int64_t updated_ns = 0;
};

struct NewModelVersion {
  std::string checkpoint_uuid;
  std::string checkpoint_json;  // shown
  std::string storage_json;     // the checkpoint's storage with its keys: never shown
  std::string name;
  std::string comment;
  std::string metadata_json = "{}";
  std::string labels_json = "[]";
  std::string notes;
  std::optional<int64_t> user_id;
};
// The model's next version (its highest plus one; the model's row is locked meanwhile, so two
// registrations never take one number). NotFound for an unknown model.
Result<ModelVersionRecord> CreateModelVersion(pqxx::work& tx, int64_t model_id,
                                              const NewModelVersion& version);
// Newest first when `descending`; by creation time instead of number when `by_created`.
// The model's versions from the `start`th, at most `limit` (0: all), read a page at a time.
std::vector<ModelVersionRecord> ListModelVersions(pqxx::work& tx, int64_t model_id, bool by_created,
                                                  bool descending, int64_t start = 0,
                                                  int64_t limit = 0);
Result<ModelVersionRecord> FindModelVersion(pqxx::work& tx, int64_t model_id,
                                            int32_t version);  // NotFound

struct ModelVersionChange {
  std::optional<std::string> name;
  std::optional<std::string> comment;
  std::optional<std::string> metadata_json;
  std::optional<std::string> labels_json;
  std::optional<std::string> notes;
};
Status UpdateModelVersion(pqxx::work& tx, int64_t model_id, int32_t version,
                          const ModelVersionChange& change);                   // NotFound
Status DeleteModelVersion(pqxx::work& tx, int64_t model_id, int32_t version);  // NotFound

// A checkpoint some version registered, as it was then (its v1Checkpoint and its storage with
// keys); none when no version names `uuid`.
struct RegisteredCheckpoint {
  std::string checkpoint_json;
  std::string storage_json;
};
std::optional<RegisteredCheckpoint> FindRegisteredCheckpoint(pqxx::work& tx,
                                                             const std::string& uuid);
// Which of `uuids` some model version names.
std::vector<std::string> RegisteredAmong(pqxx::work& tx, const std::vector<std::string>& uuids);

// Registration and removal of one checkpoint exclude each other: both lock its row first.
// ClaimForRemoval: before its files are removed, those of `uuids` no model version registers are
// marked removing and returned (a registration committed first keeps its checkpoint).
std::vector<std::string> ClaimForRemoval(pqxx::work& tx, const std::vector<std::string>& uuids);
// A removal that failed gives its claim back: the checkpoints may be registered again.
void ReleaseRemovalClaim(pqxx::work& tx, const std::vector<std::string>& uuids);
// Locks checkpoint `uuid`'s row for a registration in `tx`: NotFound when there is none (and no
// model version keeps it past its experiment), FailedPrecondition when its files are gone or
// being removed.
Status LockForRegistration(pqxx::work& tx, const std::string& uuid);

}  // namespace det::storage
