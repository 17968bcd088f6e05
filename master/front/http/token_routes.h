#pragma once

#include <string>

#include "bus/catalog/users.h"
#include "master/auth/users.h"
#include "master/front/http/router.h"

namespace det::master::http {

// Access tokens over REST, in Determined's paths and shapes (a token is its v1TokenInfo: id,
// userId, description, createdAt, expiry, revoked, tokenType TOKEN_TYPE_ACCESS_TOKEN), as its
// `det token` commands call them:
//
//   POST  /api/v1/tokens  {"userId", "lifespan" ("720h", "30d", "-1": never; absent: the
//                         default), "description"} -> {"token" (shown only now), "tokenId"};
//                         for another user: admins
//   GET   /api/v1/tokens[?username=&showInactive=&tokenIds=&offset=&limit=&sortBy=&orderBy=]
//                         {"tokenInfo", "pagination"}: an admin's view is everyone's tokens, a
//                         user's their own; active ones unless showInactive=true
//   PATCH /api/v1/tokens/{id}  {"description", "setRevoked"} -> {"tokenInfo"}: one's own, or
//                         anyone's (admins); a revoked token stays revoked
//
// 400 names the bad field, 403 for another user's token by a non-admin, 404 for an unknown user
// or token.
void RouteTokenApi(Router& routes, auth::Users& users);

// The bodies of POST and PATCH as the handlers read them (exposed for tests and the fuzzer):
// InvalidArgument naming the field that is missing or of the wrong type. Never throw.
Result<bus::TokenCreateRequest> TokenCreateRequestOf(const std::string& body);
Result<bus::TokenPatchRequest> TokenPatchRequestOf(int64_t token_id, const std::string& body);

}  // namespace det::master::http
