#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace det::master {

// The REST routes one server answers, each registered by its OpenAPI path template
// ("/api/v1/trials/{trial_id}/metrics"). The template becomes httplib's pattern: `{trial_id}`,
// `{experiment_id}` and `{token_id}` match 1 to 18 digits, any other `{name}` one path segment.
// operations() is what /api/v1/openapi.json must document; a test checks both ways.
class HttpRoutes {
 public:
  using Handler = std::function<void(const httplib::Request&, httplib::Response&)>;

  explicit HttpRoutes(httplib::Server& server) : server_(server) {}

  void Get(std::string_view path, Handler handler);
  void Post(std::string_view path, Handler handler);
  void Patch(std::string_view path, Handler handler);
  void Delete(std::string_view path, Handler handler);

  // "get /api/v1/agents", "post /api/v1/trials/{trial_id}/metrics", ... as registered.
  const std::vector<std::string>& operations() const { return operations_; }

  // The httplib pattern (a regular expression) of a path template.
  static std::string PatternOf(std::string_view path);

 private:
  httplib::Server& server_;
  std::vector<std::string> operations_;
};

}  // namespace det::master
