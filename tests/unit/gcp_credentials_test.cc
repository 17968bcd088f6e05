// Google credentials against the fake's token endpoint and metadata server: the RS256 JWT
// assertion (verified there with the key's public half), the token cache and its refresh, the
// Application Default Credentials order, and the project's.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "cloud_gcp/credentials.h"
#include "cloud_gcp/jwt.h"
#include "common/base64.h"
#include "tests/fakes/fake_gce.h"

namespace det::gcp {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class GcpCredentialsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("det-gcp-credentials-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    testing::FakeGceOptions options;
    options.token_ttl = std::chrono::seconds(3600);
    fake_ = std::make_unique<testing::FakeGce>(options);
    fake_->Start();
    key_path_ = (dir_ / "key.json").string();
    fake_->WriteServiceAccountKey(key_path_);
  }
  void TearDown() override {
    fake_.reset();
    fs::remove_all(dir_);
  }
  ServiceAccountKey Key() { return *ParseServiceAccountKey(fake_->ServiceAccountKey().dump()); }
  // The environment of a host off Compute Engine (the metadata host is a closed port).
  std::map<std::string, std::string> OffGce() {
    return {{"HOME", dir_.string()}, {"GCE_METADATA_HOST", "127.0.0.1:1"}};
  }
  std::shared_ptr<MetadataClient> Metadata(const std::string& host) {
    return std::make_shared<MetadataClient>(MetadataOptions{host, std::chrono::seconds(1)});
  }
  static json Part(const std::string& jwt, int index) {
    size_t start = 0;
    for (int i = 0; i < index; ++i) start = jwt.find('.', start) + 1;
    return json::parse(*Base64UrlDecode(jwt.substr(start, jwt.find('.', start) - start)));
  }

  RealClock clock_;
  fs::path dir_;
  std::string key_path_;
  std::unique_ptr<testing::FakeGce> fake_;
};

TEST_F(GcpCredentialsTest, TheAssertionIsAnRs256JwtForTheTokenEndpoint) {
  ServiceAccountTokenSource source(Key(), "test", clock_);
  const WallTime now = clock_.WallNow();
  Result<std::string> jwt = source.Assertion(now);
  ASSERT_TRUE(jwt.ok()) << jwt.status().ToString();
  const json header = Part(*jwt, 0);
  const json claims = Part(*jwt, 1);
  EXPECT_EQ(header["alg"], "RS256");
  EXPECT_EQ(header["typ"], "JWT");
  EXPECT_EQ(header["kid"], Key().private_key_id);
  EXPECT_EQ(claims["iss"], Key().client_email);
  EXPECT_EQ(claims["aud"], fake_->token_uri());
  EXPECT_EQ(claims["scope"], "https://www.googleapis.com/auth/cloud-platform");
  EXPECT_EQ(claims["exp"].get<int64_t>() - claims["iat"].get<int64_t>(), 3600);
}

TEST_F(GcpCredentialsTest, AServiceAccountKeyIsExchangedForAToken) {
  ServiceAccountTokenSource source(Key(), "test", clock_);
  Result<AccessToken> token = source.Fetch();
  ASSERT_TRUE(token.ok()) << token.status().ToString();
  EXPECT_TRUE(token->token.starts_with("ya29.fake-"));
  EXPECT_NEAR(std::chrono::duration_cast<std::chrono::seconds>(token->expires_at - clock_.WallNow())
                  .count(),
              3600, 5);
  EXPECT_EQ(fake_->tokens_issued(), 1);
}

TEST_F(GcpCredentialsTest, AnotherKeysSignatureIsRefusedByTheTokenEndpoint) {
  ServiceAccountKey stolen = Key();
  testing::FakeGce other({});  // a different RSA key, never started
  stolen.private_key = other.ServiceAccountKey()["private_key"];
  ServiceAccountTokenSource source(stolen, "test", clock_);
  Result<AccessToken> token = source.Fetch();
  ASSERT_FALSE(token.ok());
  EXPECT_EQ(token.status().code(), StatusCode::kUnauthenticated);
  EXPECT_NE(token.status().message().find("invalid_grant: Invalid JWT Signature."),
            std::string::npos)
      << token.status().message();
}

TEST_F(GcpCredentialsTest, TokensAreCachedAndFetchedAgainBeforeTheyExpire) {
  // Tokens that live 400 s: refreshed once less than 225 s is left, i.e. after 175 s. The
  // cache reads a clock that runs ahead; the assertions are signed at the real time (the token
  // endpoint refuses assertions from the future).
  testing::FakeGceOptions options;
  options.token_ttl = std::chrono::seconds(400);
  testing::FakeGce short_lived(options);
  short_lived.Start();
  SimulatedClock simulated;
  struct ShiftedClock final : Clock {
    explicit ShiftedClock(const SimulatedClock& s) : s_(s), origin_(s.WallNow()) {}
    MonoTime Now() const override { return s_.Now(); }
    void SleepUntil(MonoTime deadline) const override { s_.SleepUntil(deadline); }
    WallTime WallNow() const override {
      return std::chrono::system_clock::now() + (s_.WallNow() - origin_);
    }
    const SimulatedClock& s_;
    WallTime origin_;
  } clock(simulated);
  GcpCredentials credentials(
      std::make_unique<ServiceAccountTokenSource>(
          *ParseServiceAccountKey(short_lived.ServiceAccountKey().dump()), "test", clock_),
      clock);
  const std::string first = *credentials.Get();
  simulated.Advance(std::chrono::seconds(170));
  EXPECT_EQ(*credentials.Get(), first);
  EXPECT_EQ(credentials.fetches(), 1);
  simulated.Advance(std::chrono::seconds(10));
  const std::string second = *credentials.Get();
  EXPECT_NE(second, first);
  EXPECT_EQ(credentials.fetches(), 2);
  credentials.Invalidate();
  const std::string third = *credentials.Get();
  EXPECT_NE(third, second);
  EXPECT_EQ(credentials.fetches(), 3);
  // A refresh that fails while the token is still good keeps the token, and is not tried again
  // on every call but 30 s later.
  short_lived.InjectFault("oauth2.token", 503, "backendError", 1);
  simulated.Advance(std::chrono::seconds(180));
  EXPECT_EQ(*credentials.Get(), third);
  EXPECT_EQ(*credentials.Get(), third);
  EXPECT_EQ(credentials.fetches(), 4);
  simulated.Advance(std::chrono::seconds(31));
  EXPECT_NE(*credentials.Get(), third);
  EXPECT_EQ(credentials.fetches(), 5);
}

TEST_F(GcpCredentialsTest, AUsersRefreshTokenIsExchangedForAToken) {
  std::ofstream(dir_ / "user.json") << fake_->AuthorizedUserFile().dump();
  auto env = OffGce();
  env["GOOGLE_APPLICATION_CREDENTIALS"] = (dir_ / "user.json").string();
  auto source = ResolveTokenSource(Environment::Of(env), nullptr, clock_);
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  Result<AccessToken> token = (*source)->Fetch();
  ASSERT_TRUE(token.ok()) << token.status().ToString();
  EXPECT_TRUE(token->token.starts_with("ya29.fake-"));
  json revoked = fake_->AuthorizedUserFile();
  revoked["refresh_token"] = "1//revoked";
  std::ofstream(dir_ / "user.json") << revoked.dump();
  token = (*ResolveTokenSource(Environment::Of(env), nullptr, clock_))->Fetch();
  ASSERT_FALSE(token.ok());
  EXPECT_NE(token.status().message().find("invalid_grant: Token has been expired or revoked."),
            std::string::npos)
      << token.status().message();
}

TEST_F(GcpCredentialsTest, TheMetadataServerGivesTheInstancesToken) {
  auto metadata = Metadata(fake_->metadata_host());
  auto env = Environment::Of({{"HOME", dir_.string()}});
  Result<std::unique_ptr<TokenSource>> source = ResolveTokenSource(env, metadata, clock_);
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  EXPECT_EQ((*source)->Describe(), "the metadata server's service account");
  Result<AccessToken> token = (*source)->Fetch();
  ASSERT_TRUE(token.ok()) << token.status().ToString();
  EXPECT_TRUE(token->token.starts_with("ya29.fake-"));
  EXPECT_EQ(*metadata->Zone(), "us-central1-a");
  EXPECT_EQ(*metadata->ProjectId(), "det-fake-project");
}

TEST_F(GcpCredentialsTest, ApplicationDefaultCredentialsComeInGooglesOrder) {
  // GOOGLE_APPLICATION_CREDENTIALS first, even on Compute Engine.
  auto env = OffGce();
  env["GOOGLE_APPLICATION_CREDENTIALS"] = key_path_;
  auto source = ResolveTokenSource(Environment::Of(env), Metadata(fake_->metadata_host()), clock_);
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  EXPECT_EQ((*source)->Describe(),
            "service account " + Key().client_email + " (key file " + key_path_ + ")");
  EXPECT_EQ((*source)->project_id(), "det-fake-project");
  // Then gcloud's application default credentials (a user's refresh token).
  fs::create_directories(dir_ / ".config" / "gcloud");
  std::ofstream(dir_ / ".config" / "gcloud" / "application_default_credentials.json") << json{
      {"type", "authorized_user"},
      {"client_id", "c"},
      {"client_secret", "s"},
      {"refresh_token", "r"}}.dump();
  source = ResolveTokenSource(Environment::Of(OffGce()), Metadata("127.0.0.1:1"), clock_);
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  EXPECT_NE((*source)->Describe().find("user credentials"), std::string::npos);
  // Nothing anywhere: the message says where it looked.
  fs::remove_all(dir_ / ".config");
  source = ResolveTokenSource(Environment::Of(OffGce()), Metadata("127.0.0.1:1"), clock_);
  ASSERT_FALSE(source.ok());
  EXPECT_EQ(source.status().code(), StatusCode::kUnauthenticated);
  EXPECT_NE(source.status().message().find("GOOGLE_APPLICATION_CREDENTIALS is not set"),
            std::string::npos);
  EXPECT_NE(source.status().message().find("application_default_credentials.json"),
            std::string::npos);
}

TEST_F(GcpCredentialsTest, BrokenCredentialFilesAreErrorsThatNameTheFile) {
  std::ofstream(dir_ / "no-key.json")
      << json{{"type", "service_account"}, {"client_email", "x@y"}}.dump();
  std::ofstream(dir_ / "other.json") << json{{"type", "external_account"}}.dump();
  for (const auto& [file, expected] : {std::pair{"no-key.json", "private_key is required"},
                                       {"other.json", "type \"external_account\" is not supported"},
                                       {"missing.json", "cannot be read"}}) {
    auto env = OffGce();
    env["GOOGLE_APPLICATION_CREDENTIALS"] = (dir_ / file).string();
    auto source = ResolveTokenSource(Environment::Of(env), nullptr, clock_);
    ASSERT_FALSE(source.ok()) << file;
    EXPECT_NE(source.status().message().find((dir_ / file).string()), std::string::npos);
    EXPECT_NE(source.status().message().find(expected), std::string::npos)
        << source.status().message();
  }
  EXPECT_FALSE(SignJwtRs256({}, {}, "not a key").ok());
}

TEST_F(GcpCredentialsTest, TheProjectComesFromConfigCredentialsEnvironmentOrMetadata) {
  GcpCredentials with_key(std::make_unique<ServiceAccountTokenSource>(Key(), "test", clock_),
                          clock_);
  auto off = Metadata("127.0.0.1:1");
  auto on = Metadata(fake_->metadata_host());
  const Environment none = Environment::Of({});
  EXPECT_EQ(*ResolveProject("mine", with_key, none, *off), "mine");
  EXPECT_EQ(*ResolveProject("", with_key, none, *off), "det-fake-project");
  GcpCredentials from_metadata(std::make_unique<MetadataTokenSource>(on, clock_), clock_);
  EXPECT_EQ(
      *ResolveProject("", from_metadata, Environment::Of({{"GOOGLE_CLOUD_PROJECT", "env"}}), *off),
      "env");
  EXPECT_EQ(*ResolveProject("", from_metadata, none, *on), "det-fake-project");
  Result<std::string> nowhere = ResolveProject("", from_metadata, none, *off);
  ASSERT_FALSE(nowhere.ok());
  EXPECT_NE(nowhere.status().message().find("provider.project"), std::string::npos);
}

// Found by review, reproduced through gce_json_fuzzer: an expires_in of 2^63 - 1 seconds overflowed
// the nanoseconds of a WallTime (UBSan); it now counts as kMaxTokenLifetime.
TEST(TokenResponseTest, AnExpiryAWallTimeCannotHoldIsCappedNotOverflowed) {
  const WallTime now = WallTime{} + std::chrono::hours(24 * 365 * 56);
  auto read = [&](const std::string& expires_in) {
    return ReadTokenResponse(
        HttpResponse{200, {}, R"({"access_token": "t", "expires_in": )" + expires_in + "}"},
        "the token endpoint", now);
  };
  EXPECT_EQ(read("9223372036854775807")->expires_at, now + kMaxTokenLifetime);
  EXPECT_EQ(read("18446744073709551615")->expires_at, now + kMaxTokenLifetime);
  EXPECT_EQ(read("-9223372036854775807")->expires_at, now);
  EXPECT_EQ(read("3599")->expires_at, now + std::chrono::seconds(3599));
  EXPECT_EQ(read("\"3599\"")->expires_at, now + std::chrono::hours(1));
}

}  // namespace
}  // namespace det::gcp
