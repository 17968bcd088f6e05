#pragma once

// The master's HTTP routes, each registered by its OpenAPI path template
// ("/api/v1/trials/{trial_id}/metrics"): `{trial_id}`, `{experiment_id}` and `{token_id}` match 1
// to 18 digits, any other `{name}` one path segment. operations() is what /api/v1/openapi.json must
// document (tests/unit/openapi_test.cc checks both ways).

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "master/front/http/message.h"

namespace det::master::http {

// How a route's requests are read and answered.
struct RouteOptions {
  static constexpr size_t kDefaultBodyLimit = 8 << 20;
  size_t body_limit = kDefaultBodyLimit;  // bytes; a longer body is answered 413 unread
};

class Router {
 public:
  // Runs on one of the server's worker threads and may block (an actor's answer, PostgreSQL).
  using Handler = std::function<void(const Request&, Response&)>;
  // Parks the request: runs on a worker thread, must not wait for news, and answers through the
  // Completion whenever the answer is known (long polls hold no thread while they wait).
  using ParkedHandler = std::function<void(const Request&, Completion)>;

  struct Route {
    std::string method;  // "GET", "POST", "PATCH", "DELETE"
    std::string path;    // the template
    std::vector<std::string> segments;
    Handler handler;
    ParkedHandler parked;
    RouteOptions options;
  };
  // What Find says of a request.
  struct Found {
    const Route* route = nullptr;      // null: no route for this method and path
    bool other_method = false;         // a route has this path with another method (405)
    std::vector<std::string> matches;  // [0] the path, then each placeholder, decoded
  };

  void Get(std::string_view path, Handler handler, RouteOptions options = {});
  void Post(std::string_view path, Handler handler, RouteOptions options = {});
  void Patch(std::string_view path, Handler handler, RouteOptions options = {});
  void Delete(std::string_view path, Handler handler, RouteOptions options = {});
  void ParkedGet(std::string_view path, ParkedHandler handler, RouteOptions options = {});
  void ParkedPost(std::string_view path, ParkedHandler handler, RouteOptions options = {});

  Found Find(std::string_view method, std::string_view path) const;
  // "get /api/v1/agents", "post /api/v1/trials/{trial_id}/metrics", ... as registered.
  const std::vector<std::string>& operations() const { return operations_; }

 private:
  void Add(std::string method, std::string_view path, Handler handler, ParkedHandler parked,
           RouteOptions options);

  std::vector<Route> routes_;
  std::vector<std::string> operations_;
};

}  // namespace det::master::http
