// The credentials chain and region lookup as the AWS CLI resolves them: environment, shared files
// with profiles, IMDSv2 instance-role credentials refreshed before they expire (a fake IMDS).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "cloud_aws/credentials.h"
#include "cloud_aws/ec2_client.h"
#include "tests/fakes/fake_ec2.h"

namespace det::aws {
namespace {

namespace fs = std::filesystem;

// Real wall time moved forward by hand: IMDS hands out real expiration times.
class ShiftedClock final : public Clock {
 public:
  MonoTime Now() const override { return std::chrono::steady_clock::now() + offset_; }
  WallTime WallNow() const override { return std::chrono::system_clock::now() + offset_; }
  void SleepUntil(MonoTime deadline) const override {
    RealClock::Instance().SleepUntil(deadline - offset_);
  }
  void Advance(Duration d) { offset_ += d; }

 private:
  Duration offset_{};
};

class AwsCredentialsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    home_ = fs::temp_directory_path() / ("det-aws-home-" + std::to_string(getpid()));
    fs::create_directories(home_ / ".aws");
  }
  void TearDown() override { fs::remove_all(home_); }
  void Write(const std::string& name, const std::string& text) {
    std::ofstream(home_ / ".aws" / name) << text;
  }
  AwsEnvironment Env(std::map<std::string, std::string> vars) {
    vars["HOME"] = home_.string();
    return AwsEnvironment::Of(std::move(vars));
  }
  std::shared_ptr<ImdsClient> Imds(testing::FakeEc2& fake) {
    ImdsOptions options;
    options.endpoint = "http://127.0.0.1:" + std::to_string(fake.port());
    return std::make_shared<ImdsClient>(options, clock_);
  }
  std::shared_ptr<ImdsClient> NoImds() {
    ImdsOptions options;
    options.disabled = true;
    return std::make_shared<ImdsClient>(options, clock_);
  }

  fs::path home_;
  ShiftedClock clock_;
};

TEST_F(AwsCredentialsTest, EnvironmentComesFirstAndCarriesTheSessionToken) {
  Write("credentials", "[default]\naws_access_key_id = FILEKEY\naws_secret_access_key = s\n");
  CredentialsChain chain(Env({{"AWS_ACCESS_KEY_ID", "ENVKEY"},
                              {"AWS_SECRET_ACCESS_KEY", "envsecret"},
                              {"AWS_SESSION_TOKEN", "token"}}),
                         NoImds(), clock_);
  Result<Credentials> got = chain.Get();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->access_key_id, "ENVKEY");
  EXPECT_EQ(got->session_token, "token");
  EXPECT_EQ(chain.source(), "environment");
}

TEST_F(AwsCredentialsTest, HalfAnEnvironmentPairIsAnErrorThatNamesIt) {
  CredentialsChain chain(Env({{"AWS_ACCESS_KEY_ID", "ENVKEY"}}), NoImds(), clock_);
  Result<Credentials> got = chain.Get();
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("AWS_SECRET_ACCESS_KEY"), std::string::npos);
}

TEST_F(AwsCredentialsTest, SharedFilesFollowTheProfile) {
  Write("credentials",
        "# comment\n[default]\naws_access_key_id = DEFKEY\naws_secret_access_key = d\n\n"
        "[work]\naws_access_key_id=WORKKEY\naws_secret_access_key=w\naws_session_token = t\n");
  Write("config",
        "[default]\nregion = eu-west-1\n[profile cfg]\naws_access_key_id = CFGKEY\n"
        "aws_secret_access_key = c\nregion = ap-south-1\n");
  Result<Credentials> by_default = CredentialsChain(Env({}), NoImds(), clock_).Get();
  ASSERT_TRUE(by_default.ok());
  EXPECT_EQ(by_default->access_key_id, "DEFKEY");
  Result<Credentials> work =
      CredentialsChain(Env({{"AWS_PROFILE", "work"}}), NoImds(), clock_).Get();
  ASSERT_TRUE(work.ok());
  EXPECT_EQ(work->access_key_id, "WORKKEY");
  EXPECT_EQ(work->session_token, "t");
  // A profile only the config file has ("[profile cfg]").
  Result<Credentials> cfg = CredentialsChain(Env({{"AWS_PROFILE", "cfg"}}), NoImds(), clock_).Get();
  ASSERT_TRUE(cfg.ok());
  EXPECT_EQ(cfg->access_key_id, "CFGKEY");
  EXPECT_EQ(*ResolveRegion(Env({{"AWS_PROFILE", "cfg"}}), nullptr), "ap-south-1");
  EXPECT_EQ(*ResolveRegion(Env({}), nullptr), "eu-west-1");
  EXPECT_EQ(*ResolveRegion(Env({{"AWS_DEFAULT_REGION", "us-east-2"}}), nullptr), "us-east-2");
  EXPECT_EQ(
      *ResolveRegion(Env({{"AWS_REGION", "us-west-1"}, {"AWS_DEFAULT_REGION", "x"}}), nullptr),
      "us-west-1");
  // AWS_SHARED_CREDENTIALS_FILE moves the file.
  std::ofstream(home_ / "other") << "[default]\naws_access_key_id=OTHER\naws_secret_access_key=o\n";
  Result<Credentials> moved =
      CredentialsChain(Env({{"AWS_SHARED_CREDENTIALS_FILE", (home_ / "other").string()}}), NoImds(),
                       clock_)
          .Get();
  ASSERT_TRUE(moved.ok());
  EXPECT_EQ(moved->access_key_id, "OTHER");
}

TEST_F(AwsCredentialsTest, AProfileWithoutItsSecretIsAnError) {
  Write("credentials", "[default]\naws_access_key_id = ONLYKEY\n");
  Result<Credentials> got = CredentialsChain(Env({}), NoImds(), clock_).Get();
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("aws_secret_access_key"), std::string::npos);
}

TEST_F(AwsCredentialsTest, InstanceRoleCredentialsComeFromImdsV2AndAreRefreshedBeforeExpiry) {
  testing::FakeEc2Options options;
  options.role_credentials_ttl = std::chrono::minutes(30);
  testing::FakeEc2 fake(options);
  fake.Start();
  CredentialsChain chain(Env({}), Imds(fake), clock_);
  Result<Credentials> first = chain.Get();
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_TRUE(first->access_key_id.starts_with("ASIAFAKE"));
  EXPECT_FALSE(first->session_token.empty());
  EXPECT_EQ(chain.source(), "instance role det-autoscaler-role");
  ASSERT_TRUE(chain.Get().ok());
  EXPECT_EQ(fake.credentials_served(), 1);   // cached while fresh
  clock_.Advance(std::chrono::minutes(21));  // 9 minutes left: inside the 10-minute margin
  Result<Credentials> second = chain.Get();
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(fake.credentials_served(), 2);
  EXPECT_NE(second->access_key_id, first->access_key_id);
  // The region from the instance identity document.
  EXPECT_EQ(*ResolveRegion(Env({}), Imds(fake).get()), "us-west-2");
}

TEST_F(AwsCredentialsTest, ARefreshThatBringsTheSameCredentialsIsNotRepeatedOnEveryCall) {
  testing::FakeEc2Options options;
  options.role_credentials_ttl = std::chrono::minutes(30);
  options.rotate_role_credentials = false;  // IMDS keeps its own until 5 minutes before expiry
  testing::FakeEc2 fake(options);
  fake.Start();
  CredentialsChain chain(Env({}), Imds(fake), clock_);
  const std::string key = chain.Get()->access_key_id;
  clock_.Advance(std::chrono::minutes(21));  // inside the 10-minute margin
  EXPECT_EQ(chain.Get()->access_key_id, key);
  EXPECT_EQ(fake.credentials_served(), 2);
  EXPECT_EQ(chain.Get()->access_key_id, key);
  EXPECT_EQ(fake.credentials_served(), 2) << "not asked again at once";
  clock_.Advance(std::chrono::seconds(31));
  ASSERT_TRUE(chain.Get().ok());
  EXPECT_EQ(fake.credentials_served(), 3);
}

TEST_F(AwsCredentialsTest, InvalidateMakesTheNextGetAskTheRoleAgain) {
  testing::FakeEc2 fake({});
  fake.Start();
  CredentialsChain chain(Env({}), Imds(fake), clock_);
  const std::string first = chain.Get()->access_key_id;
  ASSERT_TRUE(chain.Get().ok());
  EXPECT_EQ(fake.credentials_served(), 1);
  chain.Invalidate();
  const std::string second = chain.Get()->access_key_id;
  EXPECT_EQ(fake.credentials_served(), 2);
  EXPECT_NE(second, first);
}

TEST_F(AwsCredentialsTest, InstanceRoleCredentialsSignEc2CallsWithTheirSessionToken) {
  testing::FakeEc2 fake({});
  fake.Start();
  auto chain = std::make_shared<CredentialsChain>(Env({}), Imds(fake), clock_);
  Ec2Client client({"us-west-2", fake.endpoint(), {}, std::chrono::seconds(5)}, chain, clock_);
  auto listed = client.DescribeInstances({});
  EXPECT_TRUE(listed.ok()) << listed.error().ToString();
  // The fake checks the credential scope too: another region's signature is refused.
  Ec2Client elsewhere({"eu-west-1", fake.endpoint(), {}, std::chrono::seconds(5)}, chain, clock_);
  auto refused = elsewhere.DescribeInstances({});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, Ec2ErrorKind::kAuth);
}

TEST_F(AwsCredentialsTest, ANamedProfileThatDoesNotExistOrCannotBeUsedIsAnError) {
  Write("credentials", "[default]\naws_access_key_id = DEFKEY\naws_secret_access_key = d\n");
  Write("config",
        "[profile assumed]\nrole_arn = arn:aws:iam::1:role/x\nsource_profile = default\n");
  Result<Credentials> missing =
      CredentialsChain(Env({{"AWS_PROFILE", "nope"}}), NoImds(), clock_).Get();
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("(nope) could not be found"), std::string::npos)
      << missing.status().message();
  Result<Credentials> assumed =
      CredentialsChain(Env({{"AWS_PROFILE", "assumed"}}), NoImds(), clock_).Get();
  ASSERT_FALSE(assumed.ok());
  EXPECT_NE(assumed.status().message().find("role_arn"), std::string::npos);
}

TEST_F(AwsCredentialsTest, ImdsWithoutATokenAnswersNothing) {
  testing::FakeEc2 fake({});
  fake.Start();
  HttpClient http;
  Result<HttpResponse> v1 = http.Send(
      {"GET", "http://127.0.0.1:" + std::to_string(fake.port()) + "/latest/meta-data/instance-id"});
  ASSERT_TRUE(v1.ok());
  EXPECT_EQ(v1->status, 401);
  EXPECT_EQ(*Imds(fake)->Get("/latest/meta-data/instance-id"), "i-0fa4e000000000host");
}

TEST_F(AwsCredentialsTest, NoCredentialsAnywhereSaysWhereItLooked) {
  Result<Credentials> got = CredentialsChain(Env({}), NoImds(), clock_).Get();
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kUnauthenticated);
  for (const char* place : {"AWS_ACCESS_KEY_ID", ".aws/credentials", ".aws/config", "IMDSv2"}) {
    EXPECT_NE(got.status().message().find(place), std::string::npos) << place;
  }
  Result<std::string> region = ResolveRegion(Env({}), nullptr);
  ASSERT_FALSE(region.ok());
  EXPECT_NE(region.status().message().find("AWS_REGION"), std::string::npos);
}

TEST_F(AwsCredentialsTest, ParsesIso8601) {
  Result<WallTime> time = ParseIso8601("2015-08-30T12:36:00Z");
  ASSERT_TRUE(time.ok());
  EXPECT_EQ(std::chrono::system_clock::to_time_t(*time), 1440938160);
  EXPECT_FALSE(ParseIso8601("yesterday").ok());
}

// Found by ec2_xml_fuzzer (a spot request's createTime in 4052): from_time_t overflowed the
// nanoseconds of a WallTime (UBSan).
TEST(Iso8601Test, YearsAWallTimeCannotHoldAreErrorsNotOverflows) {
  for (const char* text :
       {"4052-11-22T19:07:51.000Z", "9999-12-31T23:59:59Z", "1000-01-01T00:00:00Z"}) {
    Result<WallTime> time = ParseIso8601(text);
    ASSERT_FALSE(time.ok()) << text;
    EXPECT_NE(time.status().message().find("out of range"), std::string::npos);
  }
  EXPECT_TRUE(ParseIso8601("2262-01-01T00:00:00Z").ok());
}

}  // namespace
}  // namespace det::aws
