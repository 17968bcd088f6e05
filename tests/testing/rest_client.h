#pragma once

// A plain HTTP client for the master's REST API, as a script would use it.

#include <httplib.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/testing/test_util.h"

namespace det::testing {

struct RestAnswer {
  int status = 0;  // 0: no answer
  nlohmann::json body;
  std::string text;
};

class RestClient {
 public:
  explicit RestClient(int port) : port_(port) {}

  // `method` GET, POST, PATCH or DELETE; `token` sent as a Bearer token unless empty.
  RestAnswer Send(const std::string& method, const std::string& path, const std::string& token,
                  const std::string& body = "") const {
    httplib::Client http("127.0.0.1", port_);
    http.set_read_timeout(30, 0);
    httplib::Headers headers;
    if (!token.empty()) headers.emplace("Authorization", "Bearer " + token);
    httplib::Result res = method == "GET"      ? http.Get(path, headers)
                          : method == "DELETE" ? http.Delete(path, headers)
                          : method == "PATCH"  ? http.Patch(path, headers, body, "application/json")
                                               : http.Post(path, headers, body, "application/json");
    if (!res) return {};
    return {res->status, nlohmann::json::parse(res->body, nullptr, false), res->body};
  }
  // A session token, or "" when the login failed.
  std::string Login(const std::string& user, const std::string& password) const {
    RestAnswer answer = Send("POST", "/api/v1/auth/login", "",
                             nlohmann::json{{"username", user}, {"password", password}}.dump());
    return answer.status == 200 ? answer.body.value("token", "") : "";
  }

 private:
  int port_;
};

}  // namespace det::testing
