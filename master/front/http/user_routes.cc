#include "master/front/http/user_routes.h"

#include "bus/catalog/users_json.h"
#include "common/clock.h"
#include "master/front/answer_cache.h"
#include "master/front/http/json.h"

namespace det::master::http {
namespace {

using bus::ToJson;
using nlohmann::json;
using nlohmann::ordered_json;

UserAnswer UserJson(const Result<bus::UserReply>& reply) {
  if (!reply.ok()) return reply.status();
  return ordered_json{{"user", ToJson(reply->user)}};
}

Result<std::optional<bool>> OptionalBool(const json& body, const std::string& name) {
  if (!body.contains(name)) return std::optional<bool>();
  DET_ASSIGN_OR_RETURN(bool value, Field<bool>(body, name, "true or false"));
  return std::optional<bool>(value);
}

// Determined's `agentUserGroup` object: {agentUid, agentGid, agentUser, agentGroup}, all four.
Result<std::optional<bus::AgentUserGroup>> OptionalAgentUserGroup(const json& body) {
  if (!body.contains("agentUserGroup")) return std::optional<bus::AgentUserGroup>();
  const json& group = body["agentUserGroup"];
  if (!group.is_object()) {
    return InvalidArgument(
        "agentUserGroup: must be an object {agentUid, agentGid, agentUser, "
        "agentGroup}");
  }
  bus::AgentUserGroup account;
  DET_ASSIGN_OR_RETURN(account.uid, Field<int32_t>(group, "agentUid", "a user id (0 or more)"));
  DET_ASSIGN_OR_RETURN(account.gid, Field<int32_t>(group, "agentGid", "a group id (0 or more)"));
  DET_ASSIGN_OR_RETURN(account.user, Field<std::string>(group, "agentUser", "a Unix user name"));
  DET_ASSIGN_OR_RETURN(account.group, Field<std::string>(group, "agentGroup", "a Unix group name"));
  DET_RETURN_IF_ERROR(auth::CheckAgentUserGroup(account).WithContext("agentUserGroup"));
  return std::optional<bus::AgentUserGroup>(account);
}

// GetUsers' filters (Determined's): ?name= (part of the username), active=, admin=, offset=,
// limit= (0: all).
struct UserFilter {
  std::string name;
  std::optional<bool> active;
  std::optional<bool> admin;
  int64_t offset = 0;
  int64_t limit = 0;
  bool Admits(const bus::UserSummary& user) const {
    return (name.empty() || user.username.find(name) != std::string::npos) &&
           (!active || user.active == *active) && (!admin || user.admin == *admin);
  }
};

Result<UserFilter> UserFilterOf(const Request& req) {
  UserFilter filter;
  filter.name = req.Param("name");
  DET_ASSIGN_OR_RETURN(filter.active, QueryBool(req, "active"));
  DET_ASSIGN_OR_RETURN(filter.admin, QueryBool(req, "admin"));
  DET_ASSIGN_OR_RETURN(filter.offset, QueryOffset(req));
  DET_ASSIGN_OR_RETURN(filter.limit, QueryNumber(req, "limit", 0));
  return filter;
}

}  // namespace

Result<bus::UserLoginRequest> LoginRequestOf(const std::string& body) {
  DET_ASSIGN_OR_RETURN(json fields, ParseJsonObject(body));
  bus::UserLoginRequest request;
  DET_ASSIGN_OR_RETURN(request.username, Field<std::string>(fields, "username", "a string"));
  DET_ASSIGN_OR_RETURN(request.password, Field<std::string>(fields, "password", "a string"));
  DET_ASSIGN_OR_RETURN(request.is_hashed,
                       OptionalField<bool>(fields, "isHashed", false, "true or false"));
  return request;
}

Result<bus::UserCreateRequest> UserCreateRequestOf(const std::string& body) {
  DET_ASSIGN_OR_RETURN(json fields, ParseJsonObject(body));
  if (!fields.contains("user") || !fields["user"].is_object()) {
    return InvalidArgument("user: is required (an object with username, admin, active)");
  }
  const json& user = fields["user"];
  bus::UserCreateRequest request;
  DET_ASSIGN_OR_RETURN(request.username, Field<std::string>(user, "username", "a string"));
  DET_ASSIGN_OR_RETURN(request.admin, OptionalField<bool>(user, "admin", false, "true or false"));
  DET_ASSIGN_OR_RETURN(request.password, Field<std::string>(fields, "password", "a string"));
  DET_ASSIGN_OR_RETURN(request.is_hashed,
                       OptionalField<bool>(fields, "isHashed", false, "true or false"));
  return request;
}

Result<bus::UserPasswordRequest> PasswordRequestOf(const std::string& username,
                                                   const std::string& body) {
  // Determined's SetUserPassword: the body is the password, a JSON string.
  const json text = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!text.is_string())
    return InvalidArgument("request body: expected the password, a JSON string");
  return bus::UserPasswordRequest{username, text.get<std::string>(), false};
}

Result<UserPatch> UserPatchOf(const std::string& username, const std::string& body) {
  DET_ASSIGN_OR_RETURN(json fields, ParseJsonObject(body));
  for (const char* unsupported : {"username", "displayName", "remote"}) {
    if (fields.contains(unsupported) && !fields[unsupported].is_null()) {
      return InvalidArgument(std::string(unsupported) +
                             ": cannot be changed here (active, admin, agentUserGroup and "
                             "password can)");
    }
  }
  UserPatch patch;
  bus::UserUpdateRequest update{username, std::nullopt, std::nullopt, std::nullopt};
  DET_ASSIGN_OR_RETURN(update.active, OptionalBool(fields, "active"));
  DET_ASSIGN_OR_RETURN(update.admin, OptionalBool(fields, "admin"));
  DET_ASSIGN_OR_RETURN(update.agent_user_group, OptionalAgentUserGroup(fields));
  if (update.active || update.admin || update.agent_user_group) patch.update = update;
  if (fields.contains("password")) {
    bus::UserPasswordRequest password{username, "", false};
    DET_ASSIGN_OR_RETURN(password.password, Field<std::string>(fields, "password", "a string"));
    DET_ASSIGN_OR_RETURN(password.is_hashed,
                         OptionalField<bool>(fields, "isHashed", false, "true or false"));
    patch.password = password;
  }
  if (!patch.update && !patch.password) {
    return InvalidArgument(
        "request body: nothing to change; give \"active\", \"admin\", \"agentUserGroup\" or "
        "\"password\"");
  }
  return patch;
}

Result<auth::Principal> UserOf(auth::Users& users, const Request& req) {
  DET_ASSIGN_OR_RETURN(std::string token, BearerToken(req, "a token from POST /api/v1/auth/login"));
  return users.Authenticate(token);
}

std::function<void(const Request&, Response&)> ForUsers(auth::Users& users, UserHandler handler) {
  return [&users, handler = std::move(handler)](const Request& req, Response& res) {
    auto answer = [&]() -> UserAnswer {
      DET_ASSIGN_OR_RETURN(auth::Principal caller, UserOf(users, req));
      return handler(caller, req);
    };
    Reply(res, answer());
  };
}

std::function<void(const Request&, Response&)> ForUsersCached(auth::Users& users,
                                                              AnswerCache* cache, std::string key,
                                                              UserHandler live) {
  return [&users, cache, key = std::move(key), live = std::move(live)](const Request& req,
                                                                       Response& res) {
    Result<auth::Principal> caller = UserOf(users, req);
    if (!caller.ok()) return Reply(res, caller.status());
    if (cache != nullptr && req.params.empty()) {
      if (Result<AnswerCache::Json> cached = cache->Get(key); cached.ok()) {
        return res.SetContent(**cached, "application/json");
      }
    }
    Reply(res, live(*caller, req));
  };
}

void RouteUserApi(Router& routes, auth::Users& users) {
  auth::Users* u = &users;
  routes.Post("/api/v1/auth/login", [u](const Request& req, Response& res) {
    Reply(res, [&]() -> UserAnswer {
      DET_ASSIGN_OR_RETURN(bus::UserLoginRequest request, LoginRequestOf(req.body));
      DET_ASSIGN_OR_RETURN(bus::UserLoginReply reply, u->Login(request));
      return ordered_json{{"token", reply.token},
                          {"user", ToJson(reply.user)},
                          {"expiresAt", Rfc3339Utc(reply.expires_at, 0)}};
    }());
  });
  routes.Post("/api/v1/auth/logout",
              ForUsers(users, [u](const auth::Principal&, const Request& req) -> UserAnswer {
                DET_RETURN_IF_ERROR(u->Logout(req.Header("Authorization").substr(7)));
                return ordered_json::object();
              }));
  routes.Get("/api/v1/me", ForUsers(users, [u](const auth::Principal& caller, const Request&) {
               return UserJson(u->Whoami(caller));
             }));
  routes.Get("/api/v1/users",
             ForUsers(users, [u](const auth::Principal& caller, const Request& req) -> UserAnswer {
               DET_ASSIGN_OR_RETURN(UserFilter filter, UserFilterOf(req));
               DET_ASSIGN_OR_RETURN(bus::UserList list, u->List(caller));
               std::vector<bus::UserSummary> chosen;
               for (const auto& user : list.users) {
                 if (filter.Admits(user)) chosen.push_back(user);
               }
               const Page page = PageOf(filter.offset, filter.limit, chosen.size());
               ordered_json all = ordered_json::array();
               for (size_t i = page.start; i < page.end; ++i) all.push_back(ToJson(chosen[i]));
               return ordered_json{{"users", all}, {"pagination", PaginationJson(page)}};
             }));
  routes.Post("/api/v1/users",
              ForUsers(users, [u](const auth::Principal& caller, const Request& req) -> UserAnswer {
                DET_RETURN_IF_ERROR(auth::RequireAdmin(caller, "create users"));
                DET_ASSIGN_OR_RETURN(bus::UserCreateRequest request, UserCreateRequestOf(req.body));
                return UserJson(u->Create(caller, request));
              }));
  routes.Get("/api/v1/users/{user_id}",
             ForUsers(users, [u](const auth::Principal& caller, const Request& req) {
               return UserJson(u->Get(caller, std::stoll(req.Match(1))));
             }));
  routes.Get("/api/v1/users/{username}/by-username",
             ForUsers(users, [u](const auth::Principal& caller, const Request& req) {
               return UserJson(u->GetByName(caller, req.Match(1)));
             }));
  routes.Post("/api/v1/users/{user_id}/password",
              ForUsers(users, [u](const auth::Principal& caller, const Request& req) -> UserAnswer {
                DET_ASSIGN_OR_RETURN(bus::UserReply target,
                                     u->Get(caller, std::stoll(req.Match(1))));
                DET_ASSIGN_OR_RETURN(bus::UserPasswordRequest request,
                                     PasswordRequestOf(target.user.username, req.body));
                return UserJson(u->SetPassword(caller, request));
              }));
  routes.Patch(
      "/api/v1/users/{user_id}",
      ForUsers(users, [u](const auth::Principal& caller, const Request& req) -> UserAnswer {
        DET_ASSIGN_OR_RETURN(bus::UserReply target, u->Get(caller, std::stoll(req.Match(1))));
        DET_ASSIGN_OR_RETURN(UserPatch patch, UserPatchOf(target.user.username, req.body));
        if (patch.update) {
          DET_RETURN_IF_ERROR(
              auth::RequireAdmin(caller, "activate, deactivate or change admin rights"));
        }
        Result<bus::UserReply> reply = target;
        if (patch.password) reply = u->SetPassword(caller, *patch.password);
        if (reply.ok() && patch.update) reply = u->Update(caller, *patch.update);
        return UserJson(reply);
      }));
}

}  // namespace det::master::http
