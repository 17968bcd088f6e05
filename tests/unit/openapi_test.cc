// /api/v1/openapi.json documents exactly the routes the master's HTTP server answers.
#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "master/auth/stored_user_records.h"
#include "master/front/front_door.h"
#include "master/front/http/http_wing.h"

namespace det::master {
namespace {

// The documented operations, "get /api/v1/agents", ...
std::set<std::string> Documented(const nlohmann::json& doc) {
  std::set<std::string> operations;
  for (const auto& [path, methods] : doc["paths"].items()) {
    for (const auto& [method, unused] : methods.items()) operations.insert(method + " " + path);
  }
  return operations;
}

// A concrete path for a template: numbers for numeric ids, words for the others.
std::string Concrete(const std::string& path) {
  std::string out = std::regex_replace(
      path, std::regex(R"(\{(trial|experiment|token|run|user|workspace|project)_id\})"), "7");
  return std::regex_replace(out, std::regex(R"(\{[a-z_]+\})"), "x");
}

TEST(RouterTest, PlaceholdersMatchASegmentAndIdsOnlyDigits) {
  http::Router router;
  router.Get("/api/v1/agents/{agent_id}/slots/{slot_id}/enable", [](auto&, auto&) {});
  router.Get("/api/v1/trials/{trial_id}/metrics", [](auto&, auto&) {});
  router.Post("/api/v1/trials/{trial_id}", [](auto&, auto&) {});
  http::Router::Found found = router.Find("GET", "/api/v1/agents/a%2Fb/slots/3/enable");
  ASSERT_NE(found.route, nullptr);
  EXPECT_EQ(found.matches,
            (std::vector<std::string>{"/api/v1/agents/a%2Fb/slots/3/enable", "a/b", "3"}));
  EXPECT_NE(router.Find("GET", "/api/v1/trials/12/metrics").route, nullptr);
  EXPECT_EQ(router.Find("GET", "/api/v1/trials/x/metrics").route, nullptr);
  EXPECT_EQ(router.Find("GET", "/api/v1/trials/1234567890123456789/metrics").route, nullptr);
  EXPECT_EQ(router.Find("GET", "/api/v1/agents//slots/3/enable").route, nullptr);
  http::Router::Found other = router.Find("GET", "/api/v1/trials/12");
  EXPECT_EQ(other.route, nullptr);
  EXPECT_TRUE(other.other_method);
  EXPECT_NE(router.Find("HEAD", "/api/v1/trials/12/metrics").route, nullptr) << "HEAD is GET's";
}

TEST(OpenApiTest, EveryRouteIsDocumentedAndEveryDocumentedRouteAnswers) {
  zmq::context_t context;
  storage::Database database(storage::DbConfig{});  // connects only when used; unused here
  auth::StoredUserRecords records(database);
  auth::Users users(records, RealClock::Instance());
  FrontDoor front(context, RealClock::Instance(), database, users, bus::MasterInfo{"v"},
                  ResourcesConfig{}, 1 << 20);
  http::HttpWing core(context, storage::DbConfig{}, AllocationTokens("secret"), {.front = &front});
  auto port = core.Bind("127.0.0.1", 0);
  ASSERT_TRUE(port.ok());
  core.Start();
  httplib::Client http("127.0.0.1", *port);
  auto served = http.Get("/api/v1/openapi.json");
  ASSERT_TRUE(served);
  ASSERT_EQ(served->status, 200);
  const auto doc = nlohmann::json::parse(served->body, nullptr, false);
  ASSERT_TRUE(doc.is_object());
  EXPECT_EQ(doc["openapi"], "3.0.3");

  const std::set<std::string> documented = Documented(doc);
  const std::set<std::string> answered(core.operations().begin(), core.operations().end());
  EXPECT_EQ(answered.size(), core.operations().size()) << "a route registered twice";
  for (const auto& operation : answered) {
    EXPECT_TRUE(documented.count(operation)) << operation << " is answered but not documented";
  }
  for (const auto& operation : documented) {
    EXPECT_TRUE(answered.count(operation)) << operation << " is documented but not answered";
    // And it is routed: an unrouted request gets a 404 naming the missing route, a routed one a
    // JSON answer (without a token: 401; without a body: 400) or its content.
    const std::string method = operation.substr(0, operation.find(' '));
    const std::string path = Concrete(operation.substr(operation.find(' ') + 1));
    httplib::Result res = method == "get"      ? http.Get(path)
                          : method == "delete" ? http.Delete(path)
                          : method == "patch"  ? http.Patch(path, "{}", "application/json")
                                               : http.Post(path, "{}", "application/json");
    ASSERT_TRUE(res) << operation;
    EXPECT_EQ(res->body.find("no route for"), std::string::npos) << operation << " is not routed";
  }
  auto unrouted = http.Get("/api/v1/no-such-route");
  EXPECT_EQ(unrouted->status, 404);
  EXPECT_NE(unrouted->body.find("no route for GET /api/v1/no-such-route"), std::string::npos);
  core.Stop();
}

TEST(HttpWingTlsTest, AnUnusableCertificateIsRefusedNamingTheField) {
  zmq::context_t context;
  storage::Database database(storage::DbConfig{});
  auth::StoredUserRecords records(database);
  auth::Users users(records, RealClock::Instance());
  FrontDoor front(context, RealClock::Instance(), database, users, bus::MasterInfo{"v"},
                  ResourcesConfig{}, 1 << 20);
  http::HttpWing core(context, storage::DbConfig{}, AllocationTokens("secret"),
                      {.front = &front,
                       .server = {.tls_cert = "/no/such/cert.pem", .tls_key = "/no/such/key.pem"}});
  auto port = core.Bind("127.0.0.1", 0);
  ASSERT_FALSE(port.ok());
  EXPECT_EQ(port.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(port.status().message().find("security.tls: cannot use the certificate "
                                         "/no/such/cert.pem"),
            std::string::npos)
      << port.status().message();
}

}  // namespace
}  // namespace det::master
