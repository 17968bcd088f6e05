// The master's REST plumbing: base64 model definitions and bearer tokens.
#include <gtest/gtest.h>
#include <httplib.h>

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

TEST(BearerTokenTest, TakesTheTokenOfABearerHeaderOnly) {
  httplib::Request req;
  EXPECT_EQ(BearerToken(req, "a token").status().message(),
            "Authorization: expected \"Bearer <a token>\"");
  req.set_header("Authorization", "Basic YWRtaW46cHc=");
  EXPECT_EQ(BearerToken(req, "x").status().code(), StatusCode::kUnauthenticated);
  req.headers.clear();
  req.set_header("Authorization", "Bearer ");
  EXPECT_FALSE(BearerToken(req, "x").ok());
  req.headers.clear();
  req.set_header("Authorization", "Bearer dets_abc");
  EXPECT_EQ(*BearerToken(req, "x"), "dets_abc");
}

}  // namespace
}  // namespace det::master
