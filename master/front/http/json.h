#pragma once

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "common/status.h"
#include "master/front/http/message.h"

namespace det::master::http {

// JSON over HTTP for the master's REST endpoints (Core API and user API): one error shape,
// Determined's (its clients read `message`, else `error.error`):
//   {"error": {"code": <gRPC code>, "reason": "<code name>", "error": "<what is wrong>"},
//    "code": <gRPC code>, "message": "<what is wrong, naming the field>"}
// with the status code the Status maps to (400 bad input, 401, 403, 404, 409 exists already, 429,
// 503 the master's service did not answer, 500 otherwise).
int HttpStatusOf(const Status& status);
// The gRPC status code Determined's API answers with for `status` (NOT_FOUND 5, ...).
int GrpcCodeOf(const Status& status);
// The error body above.
nlohmann::json ErrorBody(const Status& error);
void Reply(Response& res, const Result<nlohmann::json>& result);
void Reply(Response& res, const Result<nlohmann::ordered_json>& result);
void Reply(Response& res, const Status& error);
// The same as a Response of its own (for parked requests' completions).
Response JsonResponse(const Result<nlohmann::json>& result);
Response JsonResponse(const Status& error);

// The NDJSON line that ends a Determined stream (TaskLogs, TrialLogs, GetMetrics) that failed:
// {"error": {"grpcCode", "httpCode", "message", "httpStatus"}} and a newline.
std::string StreamErrorLine(const Status& error);

// The token of `Authorization: Bearer <token>`, or Unauthenticated saying that `what` is expected.
Result<std::string> BearerToken(const Request& req, const std::string& what);
// A trial run's allocation token as Determined's library sends it
// (`Grpc-Metadata-x-allocation-token: Bearer <DET_SESSION_TOKEN>`), or as `Authorization: Bearer`.
Result<std::string> AllocationToken(const Request& req);

// protobuf's JSON writes int64 as decimal text (Determined's checkpoint sizes): such a string
// becomes its number. Whether `value` is now an integer.
bool DecimalTextToNumber(nlohmann::json& value);

// The request body as a JSON object, or InvalidArgument.
Result<nlohmann::json> ParseBody(const Request& req);
// `body` as a JSON object, or InvalidArgument: ParseBody without the request (the body decoders
// of the REST routes start here). A body nested more than kMaxJsonDepth levels deep is refused.
// Never throws.
inline constexpr int kMaxJsonDepth = 64;
Result<nlohmann::json> ParseJsonObject(const std::string& body);

// Whether `value` is a whole number that an integer type holds from `min` to `max` (3 and 3.0, not
// 3.5, 1e300 or 2^63 for an int64_t).
bool IsWholeNumberIn(const nlohmann::json& value, int64_t min, int64_t max);

// The field as T, or InvalidArgument naming it and what is `expected` there. An integer T takes
// only whole numbers it can hold: converting others would overflow (undefined behaviour).
template <class T>
Result<T> Field(const nlohmann::json& body, const std::string& name, const char* expected) {
  if (!body.contains(name)) return InvalidArgument(name + ": is required (" + expected + ")");
  const nlohmann::json& value = body.at(name);
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    static_assert(std::is_signed_v<T>, "IsWholeNumberIn takes int64_t bounds");
    if (value.is_number() &&
        !IsWholeNumberIn(value, std::numeric_limits<T>::min(), std::numeric_limits<T>::max())) {
      return InvalidArgument(name + ": expected " + expected);
    }
  }
  try {
    return value.get<T>();
  } catch (const nlohmann::json::exception&) {
    return InvalidArgument(name + ": expected " + expected);
  }
}

// An optional field: absent (or null) stays `fallback`; present must be a T (as Field).
template <class T>
Result<T> OptionalField(const nlohmann::json& body, const std::string& name, T fallback,
                        const char* expected) {
  if (!body.contains(name) || body.at(name).is_null()) return fallback;
  return Field<T>(body, name, expected);
}

// Standard base64 (RFC 4648, padded); InvalidArgument naming `field` when `text` is not.
Result<std::string> DecodeBase64(const std::string& text, const std::string& field);

// A whole-number query parameter, or `fallback` when absent; InvalidArgument naming it otherwise.
Result<int64_t> QueryNumber(const Request& req, const std::string& name, int64_t fallback);
// A true/false query parameter (also 1/0), or nullopt when absent; InvalidArgument otherwise.
Result<std::optional<bool>> QueryBool(const Request& req, const std::string& name);

// Determined's `offset` query parameter: a whole number, negative for that many from the end (0
// when absent); InvalidArgument otherwise.
Result<int64_t> QueryOffset(const Request& req);

// Determined's pagination of a list of `total` items: from `offset` (negative: that many from the
// end), `limit` items (0: all); items [start, end) are the page's.
struct Page {
  int64_t offset = 0;
  int64_t limit = 0;
  size_t total = 0;
  size_t start = 0;
  size_t end = 0;
};
Page PageOf(int64_t offset, int64_t limit, size_t total);
// {"offset", "limit", "startIndex", "endIndex", "total"} (Determined's v1Pagination).
nlohmann::ordered_json PaginationJson(const Page& page);

// Which of a parameter's two names the query uses: its JSON name (`camel`, as Determined's clients
// send it) or its proto field name (`snake`), both of which Determined's gateway reads; `camel`
// when neither is there.
std::string QueryName(const Request& req, const std::string& camel, const std::string& snake);

// Every value of a query parameter, repeated (`?states=A&states=B`) or comma-separated.
std::vector<std::string> QueryList(const Request& req, const std::string& name);

}  // namespace det::master::http
