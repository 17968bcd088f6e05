// The small codecs the cloud clients share: base64 and base64url, percent-encoding and form
// bodies, jittered exponential backoff.
#include <gtest/gtest.h>

#include "common/base64.h"
#include "common/http_client.h"
#include "common/retry.h"

namespace det {
namespace {

TEST(Base64Test, EncodesAndDecodesRfc4648Vectors) {
  const std::pair<const char*, const char*> kVectors[] = {{"", ""},
                                                          {"f", "Zg=="},
                                                          {"fo", "Zm8="},
                                                          {"foo", "Zm9v"},
                                                          {"foob", "Zm9vYg=="},
                                                          {"fooba", "Zm9vYmE="},
                                                          {"foobar", "Zm9vYmFy"}};
  for (const auto& [text, encoded] : kVectors) {
    EXPECT_EQ(Base64Encode(text), encoded);
    EXPECT_EQ(*Base64Decode(encoded), text);
  }
  for (const char* bad : {"Zg=", "Zg===", "Z!==", "Zm9v\n", "=Zm9"}) {
    EXPECT_FALSE(Base64Decode(bad).ok()) << bad;
  }
}

TEST(Base64Test, UrlFormHasNoPaddingAndNoUnsafeCharacters) {
  EXPECT_EQ(Base64UrlEncode("\xfb\xff\xbf"), "-_-_");
  EXPECT_EQ(Base64UrlEncode("fo"), "Zm8");
  EXPECT_EQ(*Base64UrlDecode("Zm8"), "fo");
  EXPECT_EQ(*Base64UrlDecode("-_-_"), "\xfb\xff\xbf");
  for (const char* bad : {"Zm8=", "+/+/", "Z", "a b"}) {
    EXPECT_FALSE(Base64UrlDecode(bad).ok()) << bad;
  }
  const std::string binary("\x00\x01\xfe\xff", 4);
  EXPECT_EQ(*Base64UrlDecode(Base64UrlEncode(binary)), binary);
}

// Docker's X-Registry-Auth: the real engine reads an unpadded header as no credentials.
TEST(Base64Test, PaddedUrlFormKeepsItsPaddingAndRequiresIt) {
  EXPECT_EQ(Base64UrlEncodePadded("fo"), "Zm8=");
  EXPECT_EQ(Base64UrlEncodePadded("\xfb\xff\xbf"), "-_-_");
  EXPECT_EQ(*Base64UrlDecodePadded("Zm8="), "fo");
  for (const char* bad : {"Zm8", "+/+/", "Zg=", "a b="}) {
    EXPECT_FALSE(Base64UrlDecodePadded(bad).ok()) << bad;
  }
}

TEST(FormEncodeTest, PercentEncodesEverythingButUnreservedCharacters) {
  EXPECT_EQ(FormEncode(
                {{"grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"}, {"a b", "x&y=z~"}}),
            "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&a%20b=x%26y%3Dz~");
  EXPECT_EQ(UriDecode("%7e%7E%zz%2"), "~~%zz%2");
  EXPECT_EQ(UriDecode("caf%C3%A9"), "caf\xc3\xa9");
}

TEST(FormDecodeTest, ReadsWhatFormEncodeWritesAndFormsPlusesAndBareNames) {
  const std::map<std::string, std::string> fields = {{"a b", "x&y=z~"}, {"k", "caf\xc3\xa9"}};
  EXPECT_EQ(FormDecode(FormEncode({fields.begin(), fields.end()})), fields);
  EXPECT_EQ(
      FormDecode("Action=Run+Instances&flag&&x=1&x=2"),
      (std::map<std::string, std::string>{{"Action", "Run Instances"}, {"flag", ""}, {"x", "2"}}));
  EXPECT_TRUE(FormDecode("").empty());
}

TEST(BackoffDelayTest, StaysUnderTheDoublingCeilingAndTheCap) {
  const RetryPolicy policy{5, std::chrono::milliseconds(100), std::chrono::milliseconds(350)};
  for (int attempt = 0; attempt < 8; ++attempt) {
    const Duration ceiling =
        std::min<Duration>(policy.max_delay, policy.base_delay * (1 << attempt));
    Duration longest = Duration::zero();
    for (int i = 0; i < 200; ++i) {
      const Duration delay = BackoffDelay(policy, attempt);
      EXPECT_GE(delay, Duration::zero());
      EXPECT_LT(delay, ceiling);
      longest = std::max(longest, delay);
    }
    EXPECT_GT(longest, ceiling / 2)
        << "jitter spreads over the whole range (attempt " << attempt << ")";
  }
}

}  // namespace
}  // namespace det
