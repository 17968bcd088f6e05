#include "master/front/http/router.h"

#include <algorithm>
#include <cctype>

namespace det::master::http {
namespace {

std::vector<std::string> Split(std::string_view path) {
  std::vector<std::string> segments;
  size_t start = path.starts_with('/') ? 1 : 0;
  while (start <= path.size()) {
    const size_t slash = path.find('/', start);
    segments.emplace_back(
        path.substr(start, slash == std::string_view::npos ? slash : slash - start));
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return segments;
}

bool IsPlaceholder(const std::string& segment) {
  return segment.size() > 2 && segment.front() == '{' && segment.back() == '}';
}

bool IsNumericPlaceholder(const std::string& segment) {
  return segment == "{trial_id}" || segment == "{experiment_id}" || segment == "{token_id}" ||
         segment == "{run_id}" || segment == "{user_id}" || segment == "{workspace_id}" ||
         segment == "{project_id}";
}

// Whether `value` (one segment of a request's path, still encoded) fits the template segment.
bool Fits(const std::string& segment, std::string_view value) {
  if (!IsPlaceholder(segment)) return segment == value;
  if (value.empty()) return false;
  if (!IsNumericPlaceholder(segment)) return true;
  return value.size() <= 18 && std::all_of(value.begin(), value.end(), [](char c) {
           return std::isdigit(static_cast<unsigned char>(c));
         });
}

std::string Upper(std::string_view method) {
  std::string upper(method);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return upper;
}

}  // namespace

void Router::Add(std::string method, std::string_view path, Handler handler, ParkedHandler parked,
                 RouteOptions options) {
  std::string lower = method;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  operations_.push_back(lower + " " + std::string(path));
  routes_.push_back(Route{std::move(method), std::string(path), Split(path), std::move(handler),
                          std::move(parked), options});
}

void Router::Get(std::string_view path, Handler handler, RouteOptions options) {
  Add("GET", path, std::move(handler), nullptr, options);
}
void Router::Post(std::string_view path, Handler handler, RouteOptions options) {
  Add("POST", path, std::move(handler), nullptr, options);
}
void Router::Patch(std::string_view path, Handler handler, RouteOptions options) {
  Add("PATCH", path, std::move(handler), nullptr, options);
}
void Router::Delete(std::string_view path, Handler handler, RouteOptions options) {
  Add("DELETE", path, std::move(handler), nullptr, options);
}
void Router::ParkedGet(std::string_view path, ParkedHandler handler, RouteOptions options) {
  Add("GET", path, nullptr, std::move(handler), options);
}
void Router::ParkedPost(std::string_view path, ParkedHandler handler, RouteOptions options) {
  Add("POST", path, nullptr, std::move(handler), options);
}

Router::Found Router::Find(std::string_view method, std::string_view path) const {
  Found found;
  const std::vector<std::string> parts = Split(path);
  const std::string wanted = Upper(method) == "HEAD" ? "GET" : Upper(method);
  for (const Route& route : routes_) {
    if (route.segments.size() != parts.size()) continue;
    bool fits = true;
    for (size_t i = 0; i < parts.size() && fits; ++i) fits = Fits(route.segments[i], parts[i]);
    if (!fits) continue;
    if (route.method != wanted) {
      found.other_method = true;
      continue;
    }
    found.route = &route;
    found.matches = {std::string(path)};
    for (size_t i = 0; i < parts.size(); ++i) {
      if (IsPlaceholder(route.segments[i])) {
        found.matches.push_back(PercentDecode(parts[i], /*plus_is_space=*/false));
      }
    }
    return found;
  }
  return found;
}

}  // namespace det::master::http
