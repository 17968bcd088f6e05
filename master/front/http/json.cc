#include "master/front/http/json.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>

#include "common/base64.h"

namespace det::master::http {

int HttpStatusOf(const Status& status) {
  switch (status.code()) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kFailedPrecondition:
      return 400;
    case StatusCode::kUnauthenticated:
      return 401;
    case StatusCode::kPermissionDenied:
      return 403;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kAlreadyExists:
      return 409;
    case StatusCode::kResourceExhausted:
      return 429;
    case StatusCode::kUnavailable:
    case StatusCode::kDeadlineExceeded:
      return 503;
    default:
      return 500;
  }
}

int GrpcCodeOf(const Status& status) {
  switch (status.code()) {
    case StatusCode::kOk:
      return 0;
    case StatusCode::kInvalidArgument:
      return 3;
    case StatusCode::kDeadlineExceeded:
      return 4;
    case StatusCode::kNotFound:
      return 5;
    case StatusCode::kAlreadyExists:
      return 6;
    case StatusCode::kPermissionDenied:
      return 7;
    case StatusCode::kResourceExhausted:
      return 8;
    case StatusCode::kFailedPrecondition:
      return 9;
    case StatusCode::kUnavailable:
      return 14;
    case StatusCode::kUnauthenticated:
      return 16;
    default:
      return 13;
  }
}

nlohmann::json ErrorBody(const Status& error) {
  return ErrorJson(GrpcCodeOf(error), StatusCodeName(error.code()), error.message());
}

namespace {

template <class Json>
void ReplyWith(Response& res, const Result<Json>& result) {
  if (result.ok()) {
    res.SetContent(result->dump(), "application/json");
    return;
  }
  res.status = HttpStatusOf(result.status());
  res.SetContent(ErrorBody(result.status()).dump(), "application/json");
}

}  // namespace

void Reply(Response& res, const Result<nlohmann::json>& result) { ReplyWith(res, result); }
void Reply(Response& res, const Status& error) { ReplyWith(res, Result<nlohmann::json>(error)); }
void Reply(Response& res, const Result<nlohmann::ordered_json>& result) { ReplyWith(res, result); }

Response JsonResponse(const Result<nlohmann::json>& result) {
  Response res;
  Reply(res, result);
  return res;
}

Response JsonResponse(const Status& error) {
  Response res;
  Reply(res, error);
  return res;
}

Result<std::string> BearerToken(const Request& req, const std::string& what) {
  const std::string header = req.Header("Authorization");
  if (!header.starts_with("Bearer ") || header.size() == 7) {
    return Status(StatusCode::kUnauthenticated,
                  "Authorization: expected \"Bearer <" + what + ">\"");
  }
  return header.substr(7);
}

Result<std::string> AllocationToken(const Request& req) {
  const std::string header = req.Header("Grpc-Metadata-x-allocation-token");
  if (header.empty()) return BearerToken(req, "DET_SESSION_TOKEN");
  if (!header.starts_with("Bearer ") || header.size() == 7) {
    return Status(StatusCode::kUnauthenticated,
                  "Grpc-Metadata-x-allocation-token: expected \"Bearer <DET_SESSION_TOKEN>\"");
  }
  return header.substr(7);
}

bool DecimalTextToNumber(nlohmann::json& value) {
  if (value.is_string()) {
    const std::string text = value.get<std::string>();
    if (!text.empty() && text.size() < 19 &&
        text.find_first_not_of("0123456789") == std::string::npos) {
      value = std::stoll(text);
    }
  }
  return value.is_number_integer();
}

Result<nlohmann::json> ParseBody(const Request& req) { return ParseJsonObject(req.body); }

Result<nlohmann::json> ParseJsonObject(const std::string& body) {
  // Deeper values are not kept: dump() and the YAML reader recurse once per level, and a body
  // of a few thousand brackets would overflow the stack of the thread that answers it.
  bool too_deep = false;
  nlohmann::json parsed = nlohmann::json::parse(
      body,
      [&too_deep](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
        if (depth > kMaxJsonDepth) too_deep = true;
        return !too_deep;
      },
      false);
  if (too_deep) {
    return InvalidArgument("request body: nested more than " + std::to_string(kMaxJsonDepth) +
                           " levels deep");
  }
  if (!parsed.is_object()) return InvalidArgument("request body: expected a JSON object");
  return parsed;
}

bool IsWholeNumberIn(const nlohmann::json& value, int64_t min, int64_t max) {
  if (value.is_number_unsigned()) return value.get<uint64_t>() <= static_cast<uint64_t>(max);
  if (value.is_number_integer()) {
    const int64_t number = value.get<int64_t>();
    return number >= min && number <= max;
  }
  if (!value.is_number_float()) return false;
  // A double between min - 1 and max + 1 (each rounded to a double) truncates to min..max.
  const double number = value.get<double>();
  return std::isfinite(number) && number == std::trunc(number) &&
         number > static_cast<double>(min) - 1.0 && number < static_cast<double>(max) + 1.0;
}

Result<std::string> DecodeBase64(const std::string& text, const std::string& field) {
  Result<std::string> decoded = Base64Decode(text);
  if (!decoded.ok()) return decoded.status().WithContext(field);
  return decoded;
}

Result<int64_t> QueryNumber(const Request& req, const std::string& name, int64_t fallback) {
  if (!req.HasParam(name)) return fallback;
  const std::string text = req.Param(name);
  if (text.empty() || text.size() > 18 ||
      text.find_first_not_of("0123456789") != std::string::npos) {
    return InvalidArgument(name + ": expected a whole number, got \"" + text + "\"");
  }
  return std::stoll(text);
}

std::string QueryName(const Request& req, const std::string& camel, const std::string& snake) {
  return !req.HasParam(camel) && req.HasParam(snake) ? snake : camel;
}

Result<int64_t> QueryOffset(const Request& req) {
  if (!req.HasParam("offset")) return int64_t{0};
  const std::string text = req.Param("offset");
  const std::string digits = text.starts_with('-') ? text.substr(1) : text;
  if (digits.empty() || digits.size() > 18 ||
      digits.find_first_not_of("0123456789") != std::string::npos) {
    return InvalidArgument("offset: expected a whole number (negative: from the end), got \"" +
                           text + "\"");
  }
  return std::stoll(text);
}

std::string StreamErrorLine(const Status& error) {
  return nlohmann::json{{"error",
                         {{"grpcCode", GrpcCodeOf(error)},
                          {"httpCode", HttpStatusOf(error)},
                          {"message", error.message()},
                          {"httpStatus", std::string(StatusCodeName(error.code()))}}}}
             .dump() +
         "\n";
}

Result<std::optional<bool>> QueryBool(const Request& req, const std::string& name) {
  if (!req.HasParam(name)) return std::optional<bool>();
  const std::string text = req.Param(name);
  if (text == "true" || text == "1") return std::optional<bool>(true);
  if (text == "false" || text == "0") return std::optional<bool>(false);
  return InvalidArgument(name + ": expected true or false, got \"" + text + "\"");
}

Page PageOf(int64_t offset, int64_t limit, size_t total) {
  Page page;
  page.offset = offset;
  page.limit = std::max<int64_t>(limit, 0);
  page.total = total;
  const auto held = static_cast<int64_t>(total);
  page.start = static_cast<size_t>(offset >= 0 ? std::min(offset, held)
                                               : std::max<int64_t>(0, held + offset));
  page.end = page.limit == 0
                 ? total
                 : std::min<size_t>(total, page.start + static_cast<size_t>(page.limit));
  return page;
}

nlohmann::ordered_json PaginationJson(const Page& page) {
  return {{"offset", page.offset},
          {"limit", page.limit},
          {"startIndex", page.start},
          {"endIndex", page.end},
          {"total", page.total}};
}

std::vector<std::string> QueryList(const Request& req, const std::string& name) {
  std::vector<std::string> values;
  for (size_t i = 0; i < req.ParamCount(name); ++i) {
    std::stringstream parts(req.Param(name, i));
    for (std::string part; std::getline(parts, part, ',');) {
      if (!part.empty()) values.push_back(part);
    }
  }
  return values;
}

}  // namespace det::master::http
