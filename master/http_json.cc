#include "master/http_json.h"

#include <httplib.h>

#include <cctype>
#include <sstream>

#include "common/base64.h"

namespace det::master {

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
    case StatusCode::kUnavailable:
    case StatusCode::kDeadlineExceeded:
      return 503;
    default:
      return 500;
  }
}

namespace {

template <class Json>
void ReplyWith(httplib::Response& res, const Result<Json>& result) {
  if (result.ok()) {
    res.set_content(result->dump(), "application/json");
    return;
  }
  res.status = HttpStatusOf(result.status());
  res.set_content(nlohmann::json{{"error", result.status().message()}}.dump(), "application/json");
}

}  // namespace

void Reply(httplib::Response& res, const Result<nlohmann::json>& result) { ReplyWith(res, result); }
void Reply(httplib::Response& res, const Status& error) {
  ReplyWith(res, Result<nlohmann::json>(error));
}
void Reply(httplib::Response& res, const Result<nlohmann::ordered_json>& result) {
  ReplyWith(res, result);
}

Result<std::string> BearerToken(const httplib::Request& req, const std::string& what) {
  const std::string header = req.get_header_value("Authorization");
  if (!header.starts_with("Bearer ") || header.size() == 7) {
    return Status(StatusCode::kUnauthenticated,
                  "Authorization: expected \"Bearer <" + what + ">\"");
  }
  return header.substr(7);
}

Result<nlohmann::json> ParseBody(const httplib::Request& req) {
  nlohmann::json body = nlohmann::json::parse(req.body, nullptr, false);
  if (!body.is_object()) return InvalidArgument("request body: expected a JSON object");
  return body;
}

Result<std::string> DecodeBase64(const std::string& text, const std::string& field) {
  Result<std::string> decoded = Base64Decode(text);
  if (!decoded.ok()) return decoded.status().WithContext(field);
  return decoded;
}

Result<int64_t> QueryNumber(const httplib::Request& req, const std::string& name,
                            int64_t fallback) {
  if (!req.has_param(name)) return fallback;
  const std::string text = req.get_param_value(name);
  if (text.empty() || text.size() > 18 ||
      text.find_first_not_of("0123456789") != std::string::npos) {
    return InvalidArgument(name + ": expected a whole number, got \"" + text + "\"");
  }
  return std::stoll(text);
}

std::vector<std::string> QueryList(const httplib::Request& req, const std::string& name) {
  std::vector<std::string> values;
  for (size_t i = 0; i < req.get_param_value_count(name); ++i) {
    std::stringstream parts(req.get_param_value(name, i));
    for (std::string part; std::getline(parts, part, ',');) {
      if (!part.empty()) values.push_back(part);
    }
  }
  return values;
}

}  // namespace det::master
