// The master's REST plumbing: base64 model definitions, and the user API refusing HTTP where the
// bus requires CURVE keys.
#include <gtest/gtest.h>
#include <httplib.h>

#include <thread>

#include "master/experiment_api.h"
#include "master/http_json.h"

namespace det::master {
namespace {

TEST(DecodeBase64Test, DecodesPaddedTextAndNamesTheFieldOtherwise) {
  EXPECT_EQ(*DecodeBase64("aGVsbG8=", "f"), "hello");
  EXPECT_EQ(*DecodeBase64("aGk=", "f"), "hi");
  EXPECT_EQ(*DecodeBase64("aGV5", "f"), "hey");
  EXPECT_EQ(*DecodeBase64("", "f"), "");
  for (const char* bad : {"aGk", "@@@@", "aG=k"}) {
    auto decoded = DecodeBase64(bad, "model_definition");
    ASSERT_FALSE(decoded.ok()) << bad;
    EXPECT_EQ(decoded.status().message(), "model_definition: expected base64 (RFC 4648, padded)");
  }
}

TEST(ExperimentApiTest, AMasterWithCurveKeysRefusesTheUserApiOverHttp) {
  zmq::context_t context;
  httplib::Server server;
  RouteExperimentApi(server, context, UserApiAccess{.open = false});
  const int port = server.bind_to_any_port("127.0.0.1");
  ASSERT_GT(port, 0);
  std::thread serving([&] { server.listen_after_bind(); });
  httplib::Client client("127.0.0.1", port);
  auto listed = client.Get("/api/v1/experiments");
  auto created = client.Post("/api/v1/experiments", "{}", "application/json");
  server.stop();
  serving.join();
  ASSERT_TRUE(listed && created);
  EXPECT_EQ(listed->status, 401);
  EXPECT_EQ(created->status, 401);
  EXPECT_NE(listed->body.find("CURVE"), std::string::npos) << listed->body;
}

}  // namespace
}  // namespace det::master
