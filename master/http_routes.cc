#include "master/http_routes.h"

#include <httplib.h>

namespace det::master {
namespace {

bool IsNumericPlaceholder(std::string_view name) {
  return name == "trial_id" || name == "experiment_id" || name == "token_id";
}

}  // namespace

std::string HttpRoutes::PatternOf(std::string_view path) {
  std::string pattern;
  for (size_t at = 0; at < path.size();) {
    const size_t open = path.find('{', at);
    if (open == std::string_view::npos) {
      pattern.append(path.substr(at));
      break;
    }
    const size_t close = path.find('}', open);
    pattern.append(path.substr(at, open - at));
    pattern +=
        IsNumericPlaceholder(path.substr(open + 1, close - open - 1)) ? R"((\d{1,18}))" : "([^/]+)";
    at = close + 1;
  }
  return pattern;
}

void HttpRoutes::Get(std::string_view path, Handler handler) {
  operations_.push_back("get " + std::string(path));
  server_.Get(PatternOf(path), std::move(handler));
}

void HttpRoutes::Post(std::string_view path, Handler handler) {
  operations_.push_back("post " + std::string(path));
  server_.Post(PatternOf(path), std::move(handler));
}

void HttpRoutes::Patch(std::string_view path, Handler handler) {
  operations_.push_back("patch " + std::string(path));
  server_.Patch(PatternOf(path), std::move(handler));
}

void HttpRoutes::Delete(std::string_view path, Handler handler) {
  operations_.push_back("delete " + std::string(path));
  server_.Delete(PatternOf(path), std::move(handler));
}

}  // namespace det::master
