#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>

#include "master/auth/users.h"
#include "master/front/answer_cache.h"
#include "master/front/http/router.h"

namespace det::master::http {

// What a user REST handler answers: JSON, or an error (http_json.h maps it to a status).
using UserAnswer = Result<nlohmann::ordered_json>;
using UserHandler = std::function<UserAnswer(const auth::Principal&, const Request&)>;

// The user whose session or access token `Authorization: Bearer <token>` carries; Unauthenticated
// without a live one.
Result<auth::Principal> UserOf(auth::Users& users, const Request& req);

// An httplib handler for the user REST API: the caller is who `Authorization: Bearer <token>`
// (a session from /api/v1/auth/login, or an access token) speaks for; 401 without a live token.
std::function<void(const Request&, Response&)> ForUsers(auth::Users& users, UserHandler handler);

// ForUsers for a list that clients poll: a request without query parameters is answered from
// `cache`'s entry `key` (already encoded; no round trip to an actor), anything else (or without a
// cache) by `live`.
std::function<void(const Request&, Response&)> ForUsersCached(auth::Users& users,
                                                              AnswerCache* cache, std::string key,
                                                              UserHandler live);

// Logins, users and access tokens over REST, in Determined's paths and shapes (a user is its
// v1User: id, username, admin, active, displayName, agentUserGroup, ...):
//
//   POST   /api/v1/auth/login     {"username", "password", "isHashed"} -> {"token", "user",
//                                 "expiresAt"} (no token needed; isHashed: the password is
//                                 Determined's client-side digest of it, as its CLI and SDK send)
//   POST   /api/v1/auth/logout    ends the caller's session
//   GET    /api/v1/me             {"user": {...}}
//   GET    /api/v1/users[?name=&active=&admin=&offset=&limit=]  {"users", "pagination"}
//   POST   /api/v1/users          {"user": {"username", "admin"}, "password", "isHashed"}
//                                 (admins) -> {"user"}
//   GET    /api/v1/users/{id}     {"user"};  GET /api/v1/users/{name}/by-username  {"user"}
//   POST   /api/v1/users/{id}/password  "<password>" (a JSON string): one's own, or anyone's
//                                 (admins)
//   PATCH  /api/v1/users/{id}     {"active", "admin", "agentUserGroup": {"agentUid", "agentGid",
//                                 "agentUser", "agentGroup"}} (admins), {"password", "isHashed"}
//                                 (one's own, or anyone's by admins) -> {"user"}
//
// 400 names the bad field, 401 without a live token or with a wrong password, 403 for admin work
// by a non-admin, 404 for an unknown user. Access tokens: token_routes.h.
void RouteUserApi(Router& routes, auth::Users& users);

// What PATCH /api/v1/users/{id} changes: the password, the rest, or both.
struct UserPatch {
  std::optional<bus::UserPasswordRequest> password;
  std::optional<bus::UserUpdateRequest> update;
};

// The request bodies of those routes as their handlers read them (exposed for tests and the
// fuzzer): InvalidArgument naming the field that is missing or of the wrong type, or saying the
// body is not a JSON object. `username` is the one the path's id names. Never throw.
Result<bus::UserLoginRequest> LoginRequestOf(const std::string& body);
Result<bus::UserCreateRequest> UserCreateRequestOf(const std::string& body);
Result<bus::UserPasswordRequest> PasswordRequestOf(const std::string& username,
                                                   const std::string& body);
// InvalidArgument too when it changes nothing, or names what cannot change here (username,
// displayName, remote).
Result<UserPatch> UserPatchOf(const std::string& username, const std::string& body);

}  // namespace det::master::http
