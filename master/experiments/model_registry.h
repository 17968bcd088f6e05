#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "common/status.h"
#include "master/auth/users.h"
#include "storage/database.h"
#include "storage/models_repo.h"

namespace det::master {

// Determined's model registry: models (name, description, labels, metadata, notes, archived) and
// their versions, each a checkpoint registered with a name, comment, labels, metadata and notes.
// A version keeps its checkpoint as it was registered, so that the version, its download and the
// checkpoint's files outlive the experiment that made it: a registered checkpoint is never
// garbage-collected (storage::ListScoredCheckpoints leaves it out), nor removed with its
// experiment.
//
// Models are named by `identifier`: an id when all digits, a name otherwise (as Determined's
// master resolves /api/v1/models/{modelName}); so a name may not be all digits, nor hold '/'.
// Anyone logged in reads, creates, registers and edits; deleting a model or a version is for its
// owner or an admin, as in Determined. An archived model takes no new versions.
//
// Errors: NotFound naming the model or version, AlreadyExists for a taken name, InvalidArgument
// naming the field, PermissionDenied, FailedPrecondition (archived), Unavailable (PostgreSQL out
// of reach).
//
// Thread-safe: each call is one transaction on the database's pool.
class ModelRegistry {
 public:
  // `database` outlives the registry.
  explicit ModelRegistry(storage::Database& database) : database_(database) {}

  Result<storage::ModelRecord> Create(const auth::Principal& caller, storage::NewModel model);
  Result<storage::ModelRecord> Get(const std::string& identifier);
  Result<storage::ModelList> List(const storage::ModelQuery& query);
  // The model after the change.
  Result<storage::ModelRecord> Change(const std::string& identifier,
                                      const storage::ModelChange& change);
  Status Delete(const auth::Principal& caller, const std::string& identifier);
  Result<std::vector<std::string>> Labels();

  // The model's next version of `version.checkpoint_uuid` (which the caller found COMPLETED).
  Result<storage::ModelVersionRecord> Register(const auth::Principal& caller,
                                               const std::string& identifier,
                                               storage::NewModelVersion version);
  // Newest first when `descending`; by creation time instead of number when `by_created`.
  // The model and a page of its versions: from `offset` (negative: from the end, as
  // Determined's), at most `limit` (0: all); the model's num_versions is how many there are.
  Result<std::pair<storage::ModelRecord, std::vector<storage::ModelVersionRecord>>> Versions(
      const std::string& identifier, bool by_created, bool descending, int64_t offset = 0,
      int64_t limit = 0);
  Result<std::pair<storage::ModelRecord, storage::ModelVersionRecord>> Version(
      const std::string& identifier, int32_t version);
  Result<std::pair<storage::ModelRecord, storage::ModelVersionRecord>> ChangeVersion(
      const std::string& identifier, int32_t version, const storage::ModelVersionChange& change);
  Status DeleteVersion(const auth::Principal& caller, const std::string& identifier,
                       int32_t version);

  // The checkpoint `uuid` as the newest version naming it registered it; none when none does.
  Result<std::optional<storage::RegisteredCheckpoint>> Registered(const std::string& uuid);

 private:
  storage::Database& database_;
};

// Why `name` cannot name a model (empty, all digits, a '/', over 255 bytes), or OK.
Status CheckModelName(const std::string& name);
// Why `json` is not a JSON object (metadata) / an array of strings (labels), naming `field`.
Status CheckJsonObject(const std::string& json, const std::string& field);
Status CheckLabels(const std::string& json, const std::string& field);

}  // namespace det::master
