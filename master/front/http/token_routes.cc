#include "master/front/http/token_routes.h"

#include <algorithm>
#include <functional>
#include <nlohmann/json.hpp>
#include <vector>

#include "common/config.h"
#include "master/front/http/cluster_shapes.h"
#include "master/front/http/json.h"
#include "master/front/http/user_routes.h"

namespace det::master::http {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

// Determined's v1TokenInfo.
ordered_json TokenInfoJson(const bus::TokenSummary& token) {
  ordered_json info = {{"id", token.id},
                       {"userId", token.user_id},
                       {"description", token.description},
                       {"createdAt", TimeText(token.created_at)},
                       {"revoked", token.revoked_at != 0},
                       {"tokenType", "TOKEN_TYPE_ACCESS_TOKEN"}};
  if (token.expires_at != 0) info["expiry"] = TimeText(token.expires_at);
  return info;
}

// GetAccessTokens' sortBy (SORT_BY_USER_ID, _EXPIRY, _CREATED_AT, _TOKEN_TYPE, _REVOKED,
// _DESCRIPTION; unset: by id) and orderBy (ORDER_BY_DESC reverses).
Status SortTokens(std::vector<bus::TokenSummary>& tokens, const std::string& sort_by,
                  const std::string& order_by) {
  using Key = std::function<bool(const bus::TokenSummary&, const bus::TokenSummary&)>;
  auto by = [](auto field) -> Key {
    return [field](const bus::TokenSummary& a, const bus::TokenSummary& b) {
      return std::make_pair(field(a), a.id) < std::make_pair(field(b), b.id);
    };
  };
  Key less;
  if (sort_by.empty() || sort_by == "SORT_BY_UNSPECIFIED" || sort_by == "SORT_BY_TOKEN_TYPE") {
    less = by([](const bus::TokenSummary&) { return 0; });
  } else if (sort_by == "SORT_BY_USER_ID") {
    less = by([](const bus::TokenSummary& t) { return t.user_id; });
  } else if (sort_by == "SORT_BY_EXPIRY") {
    less = by([](const bus::TokenSummary& t) { return t.expires_at; });
  } else if (sort_by == "SORT_BY_CREATED_AT") {
    less = by([](const bus::TokenSummary& t) { return t.created_at; });
  } else if (sort_by == "SORT_BY_REVOKED") {
    less = by([](const bus::TokenSummary& t) { return t.revoked_at != 0; });
  } else if (sort_by == "SORT_BY_DESCRIPTION") {
    less = by([](const bus::TokenSummary& t) { return t.description; });
  } else {
    return InvalidArgument("sortBy: \"" + sort_by +
                           "\" is not one of SORT_BY_USER_ID, SORT_BY_EXPIRY, SORT_BY_CREATED_AT, "
                           "SORT_BY_TOKEN_TYPE, SORT_BY_REVOKED, SORT_BY_DESCRIPTION");
  }
  std::stable_sort(tokens.begin(), tokens.end(), less);
  if (order_by == "ORDER_BY_DESC") std::reverse(tokens.begin(), tokens.end());
  return Status::Ok();
}

// GetAccessTokens' query as the user service's request.
Result<bus::TokenListRequest> TokenListRequestOf(const auth::Principal& caller,
                                                 const Request& req) {
  bus::TokenListRequest request;
  request.username = req.Param("username");
  request.all = caller.admin && request.username.empty();
  DET_ASSIGN_OR_RETURN(std::optional<bool> show_inactive, QueryBool(req, "showInactive"));
  request.active_only = !show_inactive.value_or(false);
  for (const std::string& id : QueryList(req, "tokenIds")) {
    const json number = json::parse(id, nullptr, /*allow_exceptions=*/false);
    if (!IsWholeNumberIn(number, 1, INT64_MAX)) {
      return InvalidArgument("tokenIds: \"" + id + "\" is not a token id");
    }
    request.ids.push_back(number.get<int64_t>());
  }
  return request;
}

}  // namespace

Result<bus::TokenCreateRequest> TokenCreateRequestOf(const std::string& body) {
  DET_ASSIGN_OR_RETURN(json fields, ParseJsonObject(body));
  bus::TokenCreateRequest request;
  DET_ASSIGN_OR_RETURN(request.user_id,
                       Field<int64_t>(fields, "userId", "the id of the token's user"));
  if (request.user_id <= 0) return InvalidArgument("userId: expected the id of the token's user");
  DET_ASSIGN_OR_RETURN(request.description,
                       OptionalField<std::string>(fields, "description", "", "a string"));
  DET_ASSIGN_OR_RETURN(
      std::string lifespan,
      OptionalField<std::string>(fields, "lifespan", "", "a duration such as \"720h\", or \"-1\""));
  Result<int64_t> seconds = ParseLifespan(lifespan);
  if (!seconds.ok()) return seconds.status().WithContext("lifespan");
  request.lifespan_s = *seconds;
  return request;
}

Result<bus::TokenPatchRequest> TokenPatchRequestOf(int64_t token_id, const std::string& body) {
  DET_ASSIGN_OR_RETURN(json fields, ParseJsonObject(body));
  bus::TokenPatchRequest request;
  request.id = token_id;
  DET_ASSIGN_OR_RETURN(request.revoke,
                       OptionalField<bool>(fields, "setRevoked", false, "true or false"));
  if (fields.contains("description") && !fields["description"].is_null()) {
    DET_ASSIGN_OR_RETURN(request.description,
                         Field<std::string>(fields, "description", "a string"));
  }
  return request;
}

void RouteTokenApi(Router& routes, auth::Users& users) {
  auth::Users* u = &users;
  routes.Post("/api/v1/tokens",
              ForUsers(users, [u](const auth::Principal& caller, const Request& req) -> UserAnswer {
                DET_ASSIGN_OR_RETURN(bus::TokenCreateRequest request,
                                     TokenCreateRequestOf(req.body));
                DET_ASSIGN_OR_RETURN(bus::TokenCreateReply reply, u->CreateToken(caller, request));
                return ordered_json{{"token", reply.token}, {"tokenId", reply.summary.id}};
              }));
  routes.Get(
      "/api/v1/tokens",
      ForUsers(users, [u](const auth::Principal& caller, const Request& req) -> UserAnswer {
        DET_ASSIGN_OR_RETURN(bus::TokenListRequest request, TokenListRequestOf(caller, req));
        DET_ASSIGN_OR_RETURN(int64_t offset, QueryOffset(req));
        DET_ASSIGN_OR_RETURN(int64_t limit, QueryNumber(req, "limit", 0));
        DET_ASSIGN_OR_RETURN(bus::TokenList list, u->ListTokens(caller, request));
        DET_RETURN_IF_ERROR(SortTokens(list.tokens, req.Param("sortBy"), req.Param("orderBy")));
        const Page page = PageOf(offset, limit, list.tokens.size());
        ordered_json tokens = ordered_json::array();
        for (size_t i = page.start; i < page.end; ++i) {
          tokens.push_back(TokenInfoJson(list.tokens[i]));
        }
        return ordered_json{{"tokenInfo", tokens}, {"pagination", PaginationJson(page)}};
      }));
  routes.Patch(
      "/api/v1/tokens/{token_id}",
      ForUsers(users, [u](const auth::Principal& caller, const Request& req) -> UserAnswer {
        DET_ASSIGN_OR_RETURN(bus::TokenPatchRequest request,
                             TokenPatchRequestOf(std::stoll(req.Match(1)), req.body));
        DET_ASSIGN_OR_RETURN(bus::TokenReply reply, u->PatchToken(caller, request));
        return ordered_json{{"tokenInfo", TokenInfoJson(reply.token)}};
      }));
}

}  // namespace det::master::http
