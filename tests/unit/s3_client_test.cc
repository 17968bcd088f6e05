// The S3 client against the fake S3 (itself checked with the aws CLI): pages, batches, retries of
// throttling and of the keys a DeleteObjects left, permissions named in errors, region redirects,
// and instance-role credentials refreshed after ExpiredToken.
#include "object_store/s3_client.h"

#include <gtest/gtest.h>

#include "tests/fakes/fake_ec2.h"
#include "tests/fakes/fake_s3.h"

namespace det::object_store {
namespace {

class S3ClientTest : public ::testing::Test {
 protected:
  void SetUp() override { fake_.Start(); }

  std::shared_ptr<aws::CredentialsChain> StaticKeys(const std::string& secret = "fake-secret") {
    return std::make_shared<aws::CredentialsChain>(
        aws::AwsEnvironment::Of(
            {{"AWS_ACCESS_KEY_ID", "AKIDFAKE"}, {"AWS_SECRET_ACCESS_KEY", secret}}),
        nullptr, clock_);
  }
  std::unique_ptr<S3Client> Client(const std::string& bucket = "ckpt",
                                   std::shared_ptr<aws::CredentialsChain> credentials = nullptr) {
    S3ClientOptions options;
    options.bucket = bucket;
    options.region = "us-west-2";
    options.endpoint_url = fake_.endpoint();
    return std::make_unique<S3Client>(options, credentials ? credentials : StaticKeys(), waits_);
  }
  std::vector<std::string> KeysLeft(const std::string& bucket = "ckpt") {
    std::vector<std::string> keys;
    for (const auto& object : fake_.Objects(bucket)) keys.push_back(object["key"]);
    return keys;
  }

  RealClock clock_;
  SimulatedClock waits_{SimulatedClock::Sleeps::kSleepAdvances};  // the clients' waits, recorded
  testing::FakeS3 fake_{[] {
    testing::FakeS3Options options;
    options.page_size = 7;
    return options;
  }()};
};

TEST_F(S3ClientTest, ListsEveryPageWithKeysAsTheyAre) {
  std::vector<std::string> keys = {"p/a b", "p/a+b", "p/ä/x", "p/dir//y", "p/./z", "q/other"};
  for (int i = 0; i < 40; ++i) keys.push_back("p/uuid/" + std::to_string(1000 + i));
  for (const std::string& key : keys) fake_.Put("ckpt", key, std::string(3, 'x'));
  auto client = Client();
  ObjectResult<std::vector<ObjectInfo>> listed = client->List("p/");
  ASSERT_TRUE(listed.ok()) << listed.error().ToString();
  ASSERT_EQ(listed->size(), keys.size() - 1);
  std::vector<std::string> names;
  for (const ObjectInfo& object : *listed) {
    names.push_back(object.key);
    EXPECT_EQ(object.size, 3u);
  }
  EXPECT_TRUE(std::find(names.begin(), names.end(), "p/a+b") != names.end());
  EXPECT_TRUE(std::find(names.begin(), names.end(), "p/dir//y") != names.end());
  EXPECT_TRUE(std::find(names.begin(), names.end(), "p/./z") != names.end());
  EXPECT_EQ(fake_.CallCount("ListObjectsV2"), 7) << "45 keys in pages of 7";
  EXPECT_TRUE(client->List("none/")->empty());
}

TEST_F(S3ClientTest, PutAndGetSignKeysThatOtherServicesWouldFold) {
  auto client = Client();
  fake_.CreateBucket("ckpt");
  for (const std::string key : {"a//b", "./c", "d/../e", "sp ace+plus"}) {
    ASSERT_TRUE(client->Put(key, "bytes of " + key).ok()) << key;
    ObjectResult<std::string> back = client->Get(key);
    ASSERT_TRUE(back.ok()) << back.error().ToString();
    EXPECT_EQ(*back, "bytes of " + key);
  }
  EXPECT_EQ(KeysLeft(), (std::vector<std::string>{"./c", "a//b", "d/../e", "sp ace+plus"}));
  ObjectResult<std::string> missing = client->Get("nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, "NoSuchKey");
  EXPECT_EQ(missing.error().kind, CloudErrorKind::kNotFound);
}

TEST_F(S3ClientTest, DeletesInBatchesOfAThousand) {
  std::vector<std::string> keys;
  for (int i = 0; i < 2500; ++i) keys.push_back("exp/" + std::to_string(i) + "/<&>\"'");
  for (const std::string& key : keys) fake_.Put("ckpt", key, "x");
  keys.push_back("exp/not-there");  // S3 reports a missing key as deleted
  ObjectResult<size_t> deleted = Client()->Delete(keys);
  ASSERT_TRUE(deleted.ok()) << deleted.error().ToString();
  EXPECT_EQ(*deleted, keys.size());
  EXPECT_EQ(fake_.CallCount("DeleteObjects"), 3);
  EXPECT_TRUE(KeysLeft().empty());
}

TEST_F(S3ClientTest, RetriesOnlyTheKeysADeleteLeft) {
  for (const char* key : {"a", "b", "c", "d"}) fake_.Put("ckpt", key, "x");
  fake_.InjectKeyFault("InternalError", 2);
  ObjectResult<size_t> deleted = Client()->Delete({"a", "b", "c", "d"});
  ASSERT_TRUE(deleted.ok()) << deleted.error().ToString();
  EXPECT_EQ(fake_.CallCount("DeleteObjects"), 2);
  EXPECT_EQ(waits_.slept().size(), 1u);
  EXPECT_TRUE(KeysLeft().empty());
}

TEST_F(S3ClientTest, AKeyRefusedForGoodIsAnErrorThatNamesItAndThePermission) {
  for (const char* key : {"a", "b", "c"}) fake_.Put("ckpt", key, "x");
  fake_.InjectKeyFault("AccessDenied", 1);
  ObjectResult<size_t> deleted = Client()->Delete({"a", "b", "c"});
  ASSERT_FALSE(deleted.ok());
  EXPECT_EQ(deleted.error().kind, CloudErrorKind::kAuth);
  EXPECT_EQ(fake_.CallCount("DeleteObjects"), 1) << "AccessDenied is not retried";
  const std::string text = deleted.error().ToString();
  EXPECT_NE(text.find("1 of 3 keys were not deleted; the first, a"), std::string::npos) << text;
  EXPECT_NE(text.find("s3:DeleteObject on arn:aws:s3:::ckpt/*"), std::string::npos) << text;
  EXPECT_EQ(KeysLeft(), std::vector<std::string>{"a"});
}

TEST_F(S3ClientTest, ThrottlingIsRetriedWithBackoffAndRefusalsAreNot) {
  fake_.CreateBucket("ckpt");
  fake_.InjectFault("ListObjectsV2", "SlowDown", 503, 2);
  ASSERT_TRUE(Client()->List("").ok());
  EXPECT_EQ(fake_.CallCount("ListObjectsV2"), 3);
  EXPECT_EQ(waits_.slept().size(), 2u);

  fake_.InjectFault("ListObjectsV2", "AccessDenied", 403, 1);
  ObjectResult<std::vector<ObjectInfo>> refused = Client()->List("");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(fake_.CallCount("ListObjectsV2"), 4);
  const std::string text = refused.error().ToString();
  EXPECT_NE(text.find("s3:ListObjectsV2 on bucket ckpt failed: AccessDenied"), std::string::npos)
      << text;
  EXPECT_NE(text.find("HTTP 403, request id FAKE"), std::string::npos) << text;
  EXPECT_NE(text.find("need s3:ListBucket on arn:aws:s3:::ckpt"), std::string::npos) << text;

  fake_.InjectFault("ListObjectsV2", "InternalError", 500, 10);
  ObjectResult<std::vector<ObjectInfo>> down = Client()->List("");
  ASSERT_FALSE(down.ok());
  EXPECT_EQ(down.error().kind, CloudErrorKind::kTransient);
  EXPECT_EQ(fake_.CallCount("ListObjectsV2"), 9) << "5 attempts";
}

TEST_F(S3ClientTest, WrongSecretAndMissingBucketReadAsS3Says) {
  fake_.CreateBucket("ckpt");
  ObjectResult<std::vector<ObjectInfo>> forged = Client("ckpt", StaticKeys("wrong"))->List("");
  ASSERT_FALSE(forged.ok());
  EXPECT_EQ(forged.error().code, "SignatureDoesNotMatch");
  EXPECT_EQ(forged.error().kind, CloudErrorKind::kAuth);
  ObjectResult<std::vector<ObjectInfo>> missing = Client("nobucket")->List("");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, "NoSuchBucket");
}

TEST_F(S3ClientTest, FollowsTheBucketToItsRegion) {
  fake_.CreateBucket("far", "eu-west-1");
  fake_.Put("far", "k", "x");
  auto client = Client("far");
  ObjectResult<std::vector<ObjectInfo>> listed = client->List("");
  ASSERT_TRUE(listed.ok()) << listed.error().ToString();
  EXPECT_EQ(listed->size(), 1u);
  EXPECT_EQ(client->region(), "eu-west-1");
  EXPECT_EQ(fake_.CallCount("ListObjectsV2"), 2) << "refused once naming the region";
  EXPECT_TRUE(client->Delete({"k"}).ok());
  EXPECT_EQ(fake_.CallCount("DeleteObjects"), 1) << "signed for the bucket's region at once";
}

TEST(S3ClientAddressingTest, VirtualHostStyleNamesTheBucketInTheHost) {
  // libcurl resolves *.localhost to the loopback address itself, so the bucket can be a label.
  testing::FakeS3Options fake_options;
  fake_options.virtual_host_suffix = "localhost";
  testing::FakeS3 fake(fake_options);
  fake.Start();
  fake.CreateBucket("ckpt");
  S3ClientOptions options;
  options.bucket = "ckpt";
  options.region = "us-west-2";
  options.endpoint_url = "http://localhost:" + std::to_string(fake.port());
  options.addressing_style = "virtual";
  RealClock clock;
  S3Client client(options,
                  std::make_shared<aws::CredentialsChain>(
                      aws::AwsEnvironment::Of({{"AWS_ACCESS_KEY_ID", "AKIDFAKE"},
                                               {"AWS_SECRET_ACCESS_KEY", "fake-secret"}}),
                      nullptr, clock),
                  clock);
  ASSERT_TRUE(client.Put("a/b", "x").ok());
  ObjectResult<std::vector<ObjectInfo>> listed = client.List("a/");
  ASSERT_TRUE(listed.ok()) << listed.error().ToString();
  EXPECT_EQ(listed->size(), 1u);
  ASSERT_TRUE(client.Delete({"a/b"}).ok());
  for (const auto& call : fake.Calls()) EXPECT_TRUE(call["virtual_host"].get<bool>()) << call;
  EXPECT_TRUE(fake.Objects("ckpt").empty());
}

TEST_F(S3ClientTest, InstanceRoleCredentialsAreAskedAgainAfterExpiredToken) {
  testing::FakeEc2 imds_fake({});
  imds_fake.Start();
  aws::ImdsOptions imds;
  imds.endpoint = "http://127.0.0.1:" + std::to_string(imds_fake.port());
  auto role = std::make_shared<aws::CredentialsChain>(
      aws::AwsEnvironment::Of({}), std::make_shared<aws::ImdsClient>(imds, clock_), clock_);
  fake_.CreateBucket("ckpt");
  fake_.InjectFault("ListObjectsV2", "ExpiredToken", 400, 1);
  auto client = Client("ckpt", role);
  ObjectResult<std::vector<ObjectInfo>> listed = client->List("");
  ASSERT_TRUE(listed.ok()) << listed.error().ToString();
  EXPECT_EQ(imds_fake.credentials_served(), 2) << "asked again after ExpiredToken";
  EXPECT_TRUE(waits_.slept().empty()) << "no backoff for a refresh";
}

TEST_F(S3ClientTest, AnEndpointThatIsNotThereIsATransientErrorAfterTheRetries) {
  S3ClientOptions options;
  options.bucket = "ckpt";
  options.endpoint_url = "http://127.0.0.1:1";
  S3Client client(options, StaticKeys(), waits_);
  ObjectResult<std::vector<ObjectInfo>> listed = client.List("");
  ASSERT_FALSE(listed.ok());
  EXPECT_EQ(listed.error().kind, CloudErrorKind::kTransient);
  EXPECT_EQ(waits_.slept().size(), 4u);
  EXPECT_NE(listed.error().ToString().find("s3:ListObjectsV2 on bucket ckpt failed"),
            std::string::npos);
}

TEST(S3AnswersTest, MalformedAnswersAreErrorsNotCrashes) {
  EXPECT_FALSE(ReadListObjectsV2("").ok());
  EXPECT_FALSE(ReadListObjectsV2("<ListBucketResult><IsTruncated>true</IsTruncated>"
                                 "</ListBucketResult>")
                   .ok())
      << "truncated without a token would list forever";
  EXPECT_FALSE(ReadListObjectsV2("<ListBucketResult><Contents><Size>1</Size></Contents>"
                                 "</ListBucketResult>")
                   .ok());
  ObjectResult<ListPage> encoded = ReadListObjectsV2(
      "<ListBucketResult><EncodingType>url</EncodingType><Contents><Key>a+b%2Bc%2F%C3%A4</Key>"
      "<Size>12</Size></Contents></ListBucketResult>");
  ASSERT_TRUE(encoded.ok());
  EXPECT_EQ(encoded->objects[0].key, "a b+c/ä");
  EXPECT_EQ(encoded->objects[0].size, 12u);
  EXPECT_FALSE(ReadDeleteResult("not xml").ok());
  const ObjectStoreError head = ReadS3Error("HeadObject", 404, "", {});
  EXPECT_EQ(head.code, "NotFound");
  EXPECT_EQ(head.kind, CloudErrorKind::kNotFound);
  const ObjectStoreError proxy = ReadS3Error("ListObjectsV2", 502, "<html>bad gateway</html>", {});
  EXPECT_EQ(proxy.kind, CloudErrorKind::kTransient);
  EXPECT_NE(proxy.message.find("HTTP 502 without an S3 error document"), std::string::npos);
}

}  // namespace
}  // namespace det::object_store
