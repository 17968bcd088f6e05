#include "master/front/http/model_routes.h"

#include "common/clock.h"
#include "master/front/http/cluster_shapes.h"
#include "master/front/http/json.h"
#include "master/front/http/user_routes.h"

namespace det::master::http {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;
using storage::ModelRecord;
using storage::ModelVersionRecord;
using Caller = const auth::Principal&;
using Req = const Request&;

constexpr const char* kDefaultWorkspaceName = "Uncategorized";

template <class Json = json>
Json ParsedOr(const std::string& text, Json fallback) {
  Json parsed = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  return parsed.is_discarded() ? fallback : parsed;
}

ordered_json ModelJson(const ModelRecord& model) {
  return {{"id", model.id},
          {"name", model.name},
          {"description", model.description},
          {"metadata", ParsedOr(model.metadata_json, json::object())},
          {"labels", ParsedOr(model.labels_json, json::array())},
          {"notes", model.notes},
          {"archived", model.archived},
          {"workspaceId", model.workspace_id},
          {"userId", model.user_id.value_or(0)},
          {"username", model.username},
          {"creationTime", TimeText(model.created_ns)},
          {"lastUpdatedTime", TimeText(model.updated_ns)},
          {"numVersions", model.num_versions}};
}

ordered_json VersionJson(const ModelRecord& model, const ModelVersionRecord& version) {
  return {{"id", version.id},
          {"version", version.version},
          {"name", version.name},
          {"comment", version.comment},
          {"metadata", ParsedOr(version.metadata_json, json::object())},
          {"labels", ParsedOr(version.labels_json, json::array())},
          {"notes", version.notes},
          {"userId", version.user_id.value_or(0)},
          {"username", version.username},
          {"creationTime", TimeText(version.created_ns)},
          {"lastUpdatedTime", TimeText(version.updated_ns)},
          {"checkpoint", ParsedOr<ordered_json>(version.checkpoint_json, nullptr)},
          {"model", ModelJson(model)}};
}

// A text field when the body sets it (absent or null: nullopt).
Result<std::optional<std::string>> TextField(const json& body, const std::string& name) {
  if (!body.contains(name) || body[name].is_null()) return std::optional<std::string>();
  DET_ASSIGN_OR_RETURN(std::string text, Field<std::string>(body, name, "text"));
  return std::optional<std::string>(std::move(text));
}

// metadata (an object) or labels (a list of strings) as JSON text when the body sets them.
Result<std::optional<std::string>> JsonField(const json& body, const std::string& name) {
  if (!body.contains(name) || body[name].is_null()) return std::optional<std::string>();
  const std::string text = body[name].dump();
  DET_RETURN_IF_ERROR(name == "labels" ? CheckLabels(text, name) : CheckJsonObject(text, name));
  return std::optional<std::string>(text);
}

// The workspace a body names (workspaceId or workspaceName): only the default one exists.
Result<std::optional<int32_t>> WorkspaceOf(const json& body, const std::string& id_field) {
  DET_ASSIGN_OR_RETURN(auto name, TextField(body, "workspaceName"));
  if (name && *name != kDefaultWorkspaceName) {
    return NotFound("workspace \"" + *name + "\" not found (only the default, \"" +
                    kDefaultWorkspaceName + "\", exists)");
  }
  DET_ASSIGN_OR_RETURN(int64_t id, OptionalField<int64_t>(body, id_field, 0, "a workspace id"));
  if (id != 0 && id != kDefaultWorkspaceId) {
    return NotFound("workspace " + std::to_string(id) + " not found (only the default, " +
                    std::to_string(kDefaultWorkspaceId) + ", exists)");
  }
  if (!name && id == 0) return std::optional<int32_t>();
  return std::optional<int32_t>(static_cast<int32_t>(kDefaultWorkspaceId));
}

// What models and versions both carry (name, notes, metadata, labels), as the body sets them.
template <class Change>
Status ReadSharedFields(const json& body, Change& change) {
  DET_ASSIGN_OR_RETURN(change.name, TextField(body, "name"));
  DET_ASSIGN_OR_RETURN(change.notes, TextField(body, "notes"));
  DET_ASSIGN_OR_RETURN(change.metadata_json, JsonField(body, "metadata"));
  DET_ASSIGN_OR_RETURN(change.labels_json, JsonField(body, "labels"));
  return Status::Ok();
}

Result<storage::ModelChange> ModelChangeOf(const json& body) {
  storage::ModelChange change;
  DET_RETURN_IF_ERROR(ReadSharedFields(body, change));
  DET_ASSIGN_OR_RETURN(change.description, TextField(body, "description"));
  DET_ASSIGN_OR_RETURN(change.workspace_id, WorkspaceOf(body, "workspaceId"));
  return change;
}

Result<storage::NewModel> NewModelOf(const json& body) {
  DET_ASSIGN_OR_RETURN(storage::ModelChange fields, ModelChangeOf(body));
  if (!fields.name) return InvalidArgument("name: is required (the model's name)");
  storage::NewModel model;
  model.name = *fields.name;
  model.description = fields.description.value_or("");
  model.notes = fields.notes.value_or("");
  model.metadata_json = fields.metadata_json.value_or("{}");
  model.labels_json = fields.labels_json.value_or("[]");
  return model;
}

Result<storage::ModelVersionChange> VersionChangeOf(const json& body) {
  storage::ModelVersionChange change;
  DET_RETURN_IF_ERROR(ReadSharedFields(body, change));
  DET_ASSIGN_OR_RETURN(change.comment, TextField(body, "comment"));
  return change;
}

Result<int32_t> VersionNumberOf(const std::string& text) {
  if (text.empty() || text.size() > 9 ||
      text.find_first_not_of("0123456789") != std::string::npos) {
    return InvalidArgument("model_version_num: expected a version number, not \"" + text + "\"");
  }
  return static_cast<int32_t>(std::stol(text));
}

// ORDER_BY_DESC: newest or last first; anything else (unspecified, ORDER_BY_ASC) ascending.
Result<bool> DescendingOf(Req req) {
  const std::string order = req.Param(QueryName(req, "orderBy", "order_by"));
  if (order.empty() || order == "ORDER_BY_UNSPECIFIED" || order == "ORDER_BY_ASC") return false;
  if (order == "ORDER_BY_DESC") return true;
  return InvalidArgument("orderBy: expected ORDER_BY_ASC or ORDER_BY_DESC, not \"" + order + "\"");
}

Result<std::string> ModelSortOf(Req req) {
  static const std::pair<const char*, const char*> kSorts[] = {
      {"SORT_BY_UNSPECIFIED", "id"},
      {"SORT_BY_NAME", "name"},
      {"SORT_BY_DESCRIPTION", "description"},
      {"SORT_BY_CREATION_TIME", "created"},
      {"SORT_BY_LAST_UPDATED_TIME", "updated"},
      {"SORT_BY_NUM_VERSIONS", "versions"},
      {"SORT_BY_WORKSPACE", "workspace"}};
  const std::string sort = req.Param(QueryName(req, "sortBy", "sort_by"));
  if (sort.empty()) return std::string("id");
  for (const auto& [name, key] : kSorts) {
    if (sort == name) return std::string(key);
  }
  return InvalidArgument("sortBy: \"" + sort + "\" is not one of Determined's model sorts");
}

Result<storage::ModelQuery> ModelQueryOf(Req req) {
  storage::ModelQuery query;
  query.name = req.Param("name");
  query.description = req.Param("description");
  query.labels = QueryList(req, "labels");
  DET_ASSIGN_OR_RETURN(query.archived, QueryBool(req, "archived"));
  DET_ASSIGN_OR_RETURN(int64_t id, QueryNumber(req, "id", 0));
  if (id != 0) query.id = id;
  for (const std::string& user : QueryList(req, QueryName(req, "userIds", "user_ids"))) {
    if (user.empty() || user.find_first_not_of("0123456789") != std::string::npos) {
      return InvalidArgument("userIds: expected user ids, not \"" + user + "\"");
    }
    query.user_ids.push_back(std::stoll(user));
  }
  query.usernames = QueryList(req, "users");
  for (const std::string& name :
       QueryList(req, QueryName(req, "workspaceNames", "workspace_names"))) {
    query.workspace_ids.push_back(name == kDefaultWorkspaceName ? kDefaultWorkspaceId : -1);
  }
  for (const std::string& workspace :
       QueryList(req, QueryName(req, "workspaceIds", "workspace_ids"))) {
    query.workspace_ids.push_back(
        workspace == std::to_string(kDefaultWorkspaceId) ? kDefaultWorkspaceId : -1);
  }
  DET_ASSIGN_OR_RETURN(query.sort_by, ModelSortOf(req));
  DET_ASSIGN_OR_RETURN(query.descending, DescendingOf(req));
  return query;
}

void RouteModels(Router& routes, FrontDoor& front, ModelRegistry& models) {
  auto users = [&front](UserHandler handler) {
    return ForUsers(front.calls.users(), std::move(handler));
  };
  routes.Get("/api/v1/models", users([&models](Caller, Req req) -> UserAnswer {
               DET_ASSIGN_OR_RETURN(storage::ModelQuery query, ModelQueryOf(req));
               DET_ASSIGN_OR_RETURN(query.offset, QueryOffset(req));
               DET_ASSIGN_OR_RETURN(query.limit, QueryNumber(req, "limit", 0));
               DET_ASSIGN_OR_RETURN(storage::ModelList page, models.List(query));  // paged by SQL
               ordered_json listed = ordered_json::array();
               for (const ModelRecord& model : page.models) listed.push_back(ModelJson(model));
               return ordered_json{
                   {"models", std::move(listed)},
                   {"pagination", PaginationJson(PageOf(query.offset, query.limit,
                                                        static_cast<size_t>(page.total)))}};
             }));
  routes.Post("/api/v1/models", users([&models](Caller caller, Req req) -> UserAnswer {
                DET_ASSIGN_OR_RETURN(json body, ParseBody(req));
                DET_ASSIGN_OR_RETURN(storage::NewModel model, NewModelOf(body));
                DET_ASSIGN_OR_RETURN(ModelRecord created, models.Create(caller, std::move(model)));
                return ordered_json{{"model", ModelJson(created)}};
              }));
  routes.Get("/api/v1/models/{model_name}", users([&models](Caller, Req req) -> UserAnswer {
               DET_ASSIGN_OR_RETURN(ModelRecord model, models.Get(req.Match(1)));
               return ordered_json{{"model", ModelJson(model)}};
             }));
  routes.Patch("/api/v1/models/{model_name}", users([&models](Caller, Req req) -> UserAnswer {
                 DET_ASSIGN_OR_RETURN(json body, ParseBody(req));
                 DET_ASSIGN_OR_RETURN(storage::ModelChange change, ModelChangeOf(body));
                 DET_ASSIGN_OR_RETURN(ModelRecord model, models.Change(req.Match(1), change));
                 return ordered_json{{"model", ModelJson(model)}};
               }));
  for (const bool archive : {true, false}) {
    routes.Post(
        archive ? "/api/v1/models/{model_name}/archive" : "/api/v1/models/{model_name}/unarchive",
        users([&models, archive](Caller, Req req) -> UserAnswer {
          storage::ModelChange change;
          change.archived = archive;
          DET_RETURN_IF_ERROR(models.Change(req.Match(1), change).status());
          return ordered_json::object();
        }));
  }
  routes.Post("/api/v1/models/{model_name}/move", users([&models](Caller, Req req) -> UserAnswer {
                DET_ASSIGN_OR_RETURN(json body, ParseBody(req));
                storage::ModelChange change;
                DET_ASSIGN_OR_RETURN(change.workspace_id,
                                     WorkspaceOf(body, "destinationWorkspaceId"));
                DET_RETURN_IF_ERROR(models.Change(req.Match(1), change).status());
                return ordered_json::object();
              }));
  routes.Delete("/api/v1/models/{model_name}",
                users([&models](Caller caller, Req req) -> UserAnswer {
                  DET_RETURN_IF_ERROR(models.Delete(caller, req.Match(1)));
                  return ordered_json::object();
                }));
  routes.Get("/api/v1/model/labels", users([&models](Caller, Req) -> UserAnswer {
               DET_ASSIGN_OR_RETURN(std::vector<std::string> labels, models.Labels());
               return ordered_json{{"labels", labels}};
             }));
}

void RouteVersions(Router& routes, FrontDoor& front, ModelRegistry& models,
                   CheckpointToRegister checkpoint_to_register) {
  auto users = [&front](UserHandler handler) {
    return ForUsers(front.calls.users(), std::move(handler));
  };
  routes.Get("/api/v1/models/{model_name}/versions",
             users([&models](Caller, Req req) -> UserAnswer {
               const std::string sort = req.Param(QueryName(req, "sortBy", "sort_by"));
               if (!sort.empty() && sort != "SORT_BY_UNSPECIFIED" && sort != "SORT_BY_VERSION" &&
                   sort != "SORT_BY_CREATION_TIME") {
                 return InvalidArgument(
                     "sortBy: expected SORT_BY_VERSION or "
                     "SORT_BY_CREATION_TIME, not \"" +
                     sort + "\"");
               }
               DET_ASSIGN_OR_RETURN(bool descending, DescendingOf(req));
               DET_ASSIGN_OR_RETURN(int64_t offset, QueryOffset(req));
               DET_ASSIGN_OR_RETURN(int64_t limit, QueryNumber(req, "limit", 0));
               DET_ASSIGN_OR_RETURN(auto found,
                                    models.Versions(req.Match(1), sort == "SORT_BY_CREATION_TIME",
                                                    descending, offset, limit));
               const ModelRecord& model = found.first;
               ordered_json listed = ordered_json::array();
               for (const ModelVersionRecord& v : found.second)
                 listed.push_back(VersionJson(model, v));
               const Page page = PageOf(offset, limit, static_cast<size_t>(model.num_versions));
               return ordered_json{{"model", ModelJson(model)},
                                   {"modelVersions", std::move(listed)},
                                   {"pagination", PaginationJson(page)}};
             }));
  routes.Post("/api/v1/models/{model_name}/versions",
              users([&models, checkpoint_to_register](Caller caller, Req req) -> UserAnswer {
                DET_ASSIGN_OR_RETURN(json body, ParseBody(req));
                DET_ASSIGN_OR_RETURN(std::string uuid, Field<std::string>(body, "checkpointUuid",
                                                                          "a checkpoint's uuid"));
                DET_ASSIGN_OR_RETURN(storage::ModelVersionChange fields, VersionChangeOf(body));
                DET_RETURN_IF_ERROR(models.Get(req.Match(1)).status());  // an unknown model first
                DET_ASSIGN_OR_RETURN(storage::RegisteredCheckpoint kept,
                                     checkpoint_to_register(caller, uuid));
                storage::NewModelVersion version{uuid,
                                                 std::move(kept.checkpoint_json),
                                                 std::move(kept.storage_json),
                                                 fields.name.value_or(""),
                                                 fields.comment.value_or(""),
                                                 fields.metadata_json.value_or("{}"),
                                                 fields.labels_json.value_or("[]"),
                                                 fields.notes.value_or(""),
                                                 std::nullopt};
                DET_ASSIGN_OR_RETURN(ModelVersionRecord created,
                                     models.Register(caller, req.Match(1), std::move(version)));
                DET_ASSIGN_OR_RETURN(auto found, models.Version(req.Match(1), created.version));
                return ordered_json{{"modelVersion", VersionJson(found.first, found.second)}};
              }));
  const std::string one = "/api/v1/models/{model_name}/versions/{model_version_num}";
  routes.Get(one, users([&models](Caller, Req req) -> UserAnswer {
               DET_ASSIGN_OR_RETURN(int32_t number, VersionNumberOf(req.Match(2)));
               DET_ASSIGN_OR_RETURN(auto found, models.Version(req.Match(1), number));
               return ordered_json{{"modelVersion", VersionJson(found.first, found.second)}};
             }));
  routes.Patch(one, users([&models](Caller, Req req) -> UserAnswer {
                 DET_ASSIGN_OR_RETURN(int32_t number, VersionNumberOf(req.Match(2)));
                 DET_ASSIGN_OR_RETURN(json body, ParseBody(req));
                 DET_ASSIGN_OR_RETURN(storage::ModelVersionChange change, VersionChangeOf(body));
                 DET_ASSIGN_OR_RETURN(auto found,
                                      models.ChangeVersion(req.Match(1), number, change));
                 return ordered_json{{"modelVersion", VersionJson(found.first, found.second)}};
               }));
  routes.Delete(one, users([&models](Caller caller, Req req) -> UserAnswer {
                  DET_ASSIGN_OR_RETURN(int32_t number, VersionNumberOf(req.Match(2)));
                  DET_RETURN_IF_ERROR(models.DeleteVersion(caller, req.Match(1), number));
                  return ordered_json::object();
                }));
}

}  // namespace

void RouteModelApi(Router& routes, FrontDoor& front, CheckpointToRegister checkpoint_to_register) {
  RouteModels(routes, front, front.models);
  RouteVersions(routes, front, front.models, std::move(checkpoint_to_register));
}

}  // namespace det::master::http
