#include "master/experiments/model_registry.h"

#include <nlohmann/json.hpp>

namespace det::master {
namespace {

using storage::ModelRecord;
using storage::ModelVersionRecord;

// OK for the model's owner or an admin.
Status RequireOwner(const auth::Principal& caller, const ModelRecord& model,
                    const std::string& what) {
  if (caller.admin || (model.user_id && *model.user_id == caller.user_id)) return Status::Ok();
  return PermissionDenied("only the owner of model \"" + model.name + "\" (" + model.username +
                          ") or an admin may " + what + " (you are \"" + caller.username + "\")");
}

Status CheckChange(const storage::ModelVersionChange& change) {
  if (change.metadata_json) DET_RETURN_IF_ERROR(CheckJsonObject(*change.metadata_json, "metadata"));
  if (change.labels_json) DET_RETURN_IF_ERROR(CheckLabels(*change.labels_json, "labels"));
  return Status::Ok();
}

}  // namespace

Status CheckModelName(const std::string& name) {
  if (name.find_first_not_of(" \t\r\n") == std::string::npos) {
    return InvalidArgument("name: a model needs a name");
  }
  if (name.find_first_not_of("0123456789") == std::string::npos) {
    return InvalidArgument("name: \"" + name +
                           "\" is all digits, which names a model by its id: add a letter");
  }
  if (name.find('/') != std::string::npos) {
    return InvalidArgument("name: \"" + name + "\" holds a '/', which its URL cannot carry");
  }
  if (name.size() > 255) return InvalidArgument("name: longer than 255 bytes");
  return Status::Ok();
}

Status CheckJsonObject(const std::string& json, const std::string& field) {
  auto parsed = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object()) return InvalidArgument(field + ": must be a JSON object");
  return Status::Ok();
}

Status CheckLabels(const std::string& json, const std::string& field) {
  auto parsed = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_array()) return InvalidArgument(field + ": must be a list of strings");
  for (const auto& label : parsed) {
    if (!label.is_string()) return InvalidArgument(field + ": must be a list of strings");
  }
  return Status::Ok();
}

Result<ModelRecord> ModelRegistry::Create(const auth::Principal& caller, storage::NewModel model) {
  DET_RETURN_IF_ERROR(CheckModelName(model.name));
  DET_RETURN_IF_ERROR(CheckJsonObject(model.metadata_json, "metadata"));
  DET_RETURN_IF_ERROR(CheckLabels(model.labels_json, "labels"));
  model.user_id = caller.user_id;
  return storage::Transact<ModelRecord>(database_, [&](pqxx::work& tx) -> Result<ModelRecord> {
    DET_ASSIGN_OR_RETURN(int64_t id, storage::CreateModel(tx, model));
    return storage::FindModel(tx, std::to_string(id));
  });
}

Result<ModelRecord> ModelRegistry::Get(const std::string& identifier) {
  return storage::Transact<ModelRecord>(
      database_, [&](pqxx::work& tx) { return storage::FindModel(tx, identifier); });
}

Result<storage::ModelList> ModelRegistry::List(const storage::ModelQuery& query) {
  return storage::Transact<storage::ModelList>(
      database_,
      [&](pqxx::work& tx) -> Result<storage::ModelList> { return storage::ListModels(tx, query); });
}

Result<ModelRecord> ModelRegistry::Change(const std::string& identifier,
                                          const storage::ModelChange& change) {
  if (change.name) DET_RETURN_IF_ERROR(CheckModelName(*change.name));
  if (change.metadata_json) DET_RETURN_IF_ERROR(CheckJsonObject(*change.metadata_json, "metadata"));
  if (change.labels_json) DET_RETURN_IF_ERROR(CheckLabels(*change.labels_json, "labels"));
  return storage::Transact<ModelRecord>(database_, [&](pqxx::work& tx) -> Result<ModelRecord> {
    DET_ASSIGN_OR_RETURN(ModelRecord model, storage::FindModel(tx, identifier));
    DET_RETURN_IF_ERROR(storage::UpdateModel(tx, model.id, change));
    return storage::FindModel(tx, std::to_string(model.id));
  });
}

Status ModelRegistry::Delete(const auth::Principal& caller, const std::string& identifier) {
  return database_.Run([&](pqxx::work& tx) -> Status {
    DET_ASSIGN_OR_RETURN(ModelRecord model, storage::FindModel(tx, identifier));
    DET_RETURN_IF_ERROR(RequireOwner(caller, model, "delete it"));
    return storage::DeleteModel(tx, model.id);
  });
}

Result<std::vector<std::string>> ModelRegistry::Labels() {
  return storage::Transact<std::vector<std::string>>(
      database_, [](pqxx::work& tx) -> Result<std::vector<std::string>> {
        return storage::ListModelLabels(tx);
      });
}

Result<ModelVersionRecord> ModelRegistry::Register(const auth::Principal& caller,
                                                   const std::string& identifier,
                                                   storage::NewModelVersion version) {
  DET_RETURN_IF_ERROR(CheckJsonObject(version.metadata_json, "metadata"));
  DET_RETURN_IF_ERROR(CheckLabels(version.labels_json, "labels"));
  version.user_id = caller.user_id;
  return storage::Transact<ModelVersionRecord>(
      database_, [&](pqxx::work& tx) -> Result<ModelVersionRecord> {
        DET_ASSIGN_OR_RETURN(ModelRecord model, storage::FindModel(tx, identifier));
        if (model.archived) {
          return FailedPrecondition("model \"" + model.name +
                                    "\" is archived: unarchive it to register a version");
        }
        DET_RETURN_IF_ERROR(storage::LockForRegistration(tx, version.checkpoint_uuid));
        return storage::CreateModelVersion(tx, model.id, version);
      });
}

Result<std::pair<ModelRecord, std::vector<ModelVersionRecord>>> ModelRegistry::Versions(
    const std::string& identifier, bool by_created, bool descending, int64_t offset,
    int64_t limit) {
  using Answer = std::pair<ModelRecord, std::vector<ModelVersionRecord>>;
  return storage::Transact<Answer>(database_, [&](pqxx::work& tx) -> Result<Answer> {
    DET_ASSIGN_OR_RETURN(ModelRecord model, storage::FindModel(tx, identifier));
    const int64_t count = model.num_versions;
    const int64_t start =
        offset >= 0 ? std::min(offset, count) : std::max<int64_t>(0, count + offset);
    auto versions = storage::ListModelVersions(tx, model.id, by_created, descending, start, limit);
    return Answer{std::move(model), std::move(versions)};
  });
}

Result<std::pair<ModelRecord, ModelVersionRecord>> ModelRegistry::Version(
    const std::string& identifier, int32_t version) {
  return ChangeVersion(identifier, version, {});
}

Result<std::pair<ModelRecord, ModelVersionRecord>> ModelRegistry::ChangeVersion(
    const std::string& identifier, int32_t version, const storage::ModelVersionChange& change) {
  DET_RETURN_IF_ERROR(CheckChange(change));
  const bool changes =
      change.name || change.comment || change.metadata_json || change.labels_json || change.notes;
  using Answer = std::pair<ModelRecord, ModelVersionRecord>;
  return storage::Transact<Answer>(database_, [&](pqxx::work& tx) -> Result<Answer> {
    DET_ASSIGN_OR_RETURN(ModelRecord model, storage::FindModel(tx, identifier));
    if (changes) DET_RETURN_IF_ERROR(storage::UpdateModelVersion(tx, model.id, version, change));
    Result<ModelVersionRecord> found = storage::FindModelVersion(tx, model.id, version);
    if (!found.ok()) {
      return NotFound("model \"" + model.name + "\" has no version " + std::to_string(version));
    }
    return Answer{std::move(model), std::move(*found)};
  });
}

Status ModelRegistry::DeleteVersion(const auth::Principal& caller, const std::string& identifier,
                                    int32_t version) {
  return database_.Run([&](pqxx::work& tx) -> Status {
    DET_ASSIGN_OR_RETURN(ModelRecord model, storage::FindModel(tx, identifier));
    DET_RETURN_IF_ERROR(RequireOwner(caller, model, "delete its versions"));
    Status deleted = storage::DeleteModelVersion(tx, model.id, version);
    if (deleted.code() == StatusCode::kNotFound) {
      return NotFound("model \"" + model.name + "\" has no version " + std::to_string(version));
    }
    return deleted;
  });
}

Result<std::optional<storage::RegisteredCheckpoint>> ModelRegistry::Registered(
    const std::string& uuid) {
  using Answer = std::optional<storage::RegisteredCheckpoint>;
  return storage::Transact<Answer>(database_, [&](pqxx::work& tx) -> Result<Answer> {
    return storage::FindRegisteredCheckpoint(tx, uuid);
  });
}

}  // namespace det::master
