#include "master/front/http/message.h"

#include <cctype>
#include <nlohmann/json.hpp>

namespace det::master::http {
namespace {

bool SameName(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string Request::Header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (SameName(key, name)) return value;
  }
  return "";
}

bool Request::HasParam(std::string_view name) const { return ParamCount(name) > 0; }

std::string Request::Param(std::string_view name, size_t index) const {
  for (const auto& [key, value] : params) {
    if (key == name && index-- == 0) return value;
  }
  return "";
}

size_t Request::ParamCount(std::string_view name) const {
  size_t count = 0;
  for (const auto& [key, value] : params) count += key == name;
  return count;
}

const std::string& Request::Match(size_t i) const {
  static const std::string kNone;
  return i < matches.size() ? matches[i] : kNone;
}

void Response::SetContent(std::string content, std::string type) {
  body = std::move(content);
  content_type = std::move(type);
}

void Response::SetHeader(std::string name, std::string value) {
  headers.emplace_back(std::move(name), std::move(value));
}

void Response::Stream(std::string type, std::shared_ptr<BodySource> source) {
  content_type = std::move(type);
  stream = std::move(source);
}

std::string PercentDecode(std::string_view text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '%' && i + 2 < text.size()) {
      const int high = HexValue(text[i + 1]), low = HexValue(text[i + 2]);
      if (high >= 0 && low >= 0) {
        out += static_cast<char>(high * 16 + low);
        i += 2;
        continue;
      }
    }
    out += plus_is_space && c == '+' ? ' ' : c;
  }
  return out;
}

nlohmann::json ErrorJson(int grpc_code, std::string_view reason, const std::string& message) {
  return {{"error", {{"code", grpc_code}, {"reason", reason}, {"error", message}}},
          {"code", grpc_code},
          {"message", message}};
}

Response ErrorResponse(int status, const std::string& message) {
  // gRPC's codes for the statuses the server itself answers with (gRPC-gateway's mapping).
  const auto [code, reason] = [&]() -> std::pair<int, std::string_view> {
    switch (status) {
      case 400:
        return {3, "InvalidArgument"};
      case 401:
        return {16, "Unauthenticated"};
      case 403:
        return {7, "PermissionDenied"};
      case 404:
        return {5, "NotFound"};
      case 408:
        return {4, "DeadlineExceeded"};
      case 413:
        return {8, "ResourceExhausted"};
      case 429:
        return {8, "ResourceExhausted"};
      case 503:
        return {14, "Unavailable"};
      default:
        return {status < 500 ? 3 : 13, status < 500 ? "InvalidArgument" : "Internal"};
    }
  }();
  Response response;
  response.status = status;
  response.SetContent(ErrorJson(code, reason, message).dump(), "application/json");
  return response;
}

std::vector<std::pair<std::string, std::string>> ParseQuery(std::string_view query) {
  std::vector<std::pair<std::string, std::string>> params;
  size_t start = 0;
  while (start < query.size()) {
    size_t end = query.find('&', start);
    if (end == std::string_view::npos) end = query.size();
    const std::string_view part = query.substr(start, end - start);
    if (!part.empty()) {
      const size_t eq = part.find('=');
      params.emplace_back(
          PercentDecode(part.substr(0, eq), true),
          eq == std::string_view::npos ? "" : PercentDecode(part.substr(eq + 1), true));
    }
    start = end + 1;
  }
  return params;
}

}  // namespace det::master::http
