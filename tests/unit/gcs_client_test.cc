// The GCS client against the fake JSON API (itself checked with gcloud storage): pages, deletes
// of objects already gone, a new token after a 401, retries of 429 and 503 with backoff,
// refusals named with the permission, the metadata server's token, and answers that are not what
// the API sends.
#include "object_store/gcs_client.h"

#include <gtest/gtest.h>

#include "tests/fakes/fake_gce.h"

namespace det::object_store {
namespace {

class GcsClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::FakeGceOptions options;
    options.gcs_page_size = 7;
    fake_ = std::make_unique<testing::FakeGce>(options);
    fake_->Start();
    fake_->CreateBucket("ckpt");
    auto key = gcp::ParseServiceAccountKey(fake_->ServiceAccountKey().dump());
    credentials_ = std::make_shared<gcp::GcpCredentials>(
        std::make_unique<gcp::ServiceAccountTokenSource>(*key, "test", clock_), clock_);
  }
  std::unique_ptr<GcsClient> Client(const std::string& bucket = "ckpt",
                                    std::shared_ptr<gcp::GcpCredentials> credentials = nullptr) {
    GcsClientOptions options;
    options.bucket = bucket;
    options.endpoint_url = fake_->base_url();
    return std::make_unique<GcsClient>(options, credentials ? credentials : credentials_, waits_);
  }

  RealClock clock_;
  SimulatedClock waits_{SimulatedClock::Sleeps::kSleepAdvances};  // the clients' waits, recorded
  std::unique_ptr<testing::FakeGce> fake_;
  std::shared_ptr<gcp::GcpCredentials> credentials_;
};

TEST_F(GcsClientTest, ListsEveryPageWithNamesAsTheyAre) {
  std::vector<std::string> keys = {"p/a b", "p/a+b", "p/ä/x", "p/dir//y", "p/%2F", "q/other"};
  for (int i = 0; i < 40; ++i) keys.push_back("p/uuid/" + std::to_string(1000 + i));
  for (const std::string& key : keys) fake_->PutObject("ckpt", key, std::string(3, 'x'));
  auto client = Client();
  ObjectResult<std::vector<ObjectInfo>> listed = client->List("p/");
  ASSERT_TRUE(listed.ok()) << listed.error().ToString();
  ASSERT_EQ(listed->size(), keys.size() - 1);
  std::vector<std::string> names;
  for (const ObjectInfo& object : *listed) {
    names.push_back(object.key);
    EXPECT_EQ(object.size, 3u);
  }
  for (const char* odd : {"p/a+b", "p/a b", "p/ä/x", "p/dir//y", "p/%2F"}) {
    EXPECT_TRUE(std::find(names.begin(), names.end(), odd) != names.end()) << odd;
  }
  EXPECT_EQ(fake_->CallCount("objects.list"), 7) << "45 objects in pages of 7";
  EXPECT_TRUE(client->List("none/")->empty());
}

TEST_F(GcsClientTest, PutGetAndDeleteObjectsWhoseNamesNeedEncoding) {
  auto client = Client();
  const std::vector<std::string> keys = {"a//b", "c d+e", "f/ä?g#h", "i/j"};
  for (const std::string& key : keys) {
    ASSERT_TRUE(client->Put(key, "bytes of " + key).ok()) << key;
    ObjectResult<std::string> back = client->Get(key);
    ASSERT_TRUE(back.ok()) << back.error().ToString();
    EXPECT_EQ(*back, "bytes of " + key);
  }
  EXPECT_EQ(fake_->ObjectNames("ckpt").size(), keys.size());
  std::vector<std::string> with_a_gone_one = keys;
  with_a_gone_one.push_back("never/there");  // already gone counts as deleted
  ObjectResult<size_t> deleted = client->Delete(with_a_gone_one);
  ASSERT_TRUE(deleted.ok()) << deleted.error().ToString();
  EXPECT_EQ(*deleted, keys.size() + 1);
  EXPECT_TRUE(fake_->ObjectNames("ckpt").empty());
  ObjectResult<std::string> missing = client->Get("nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().kind, CloudErrorKind::kNotFound);
  EXPECT_EQ(missing.error().code, "notFound");
}

TEST_F(GcsClientTest, ThrottlingAndBackendErrorsAreRetriedWithBackoff) {
  for (int i = 0; i < 3; ++i) fake_->PutObject("ckpt", "p/" + std::to_string(i), "x");
  fake_->InjectFault("objects.list", 429, "rateLimitExceeded", 1);
  fake_->InjectFault("objects.delete", 503, "backendError", 2);
  auto client = Client();
  ObjectResult<std::vector<ObjectInfo>> listed = client->List("p/");
  ASSERT_TRUE(listed.ok()) << listed.error().ToString();
  ASSERT_EQ(listed->size(), 3u);
  ObjectResult<size_t> deleted = client->Delete({"p/0", "p/1", "p/2"});
  ASSERT_TRUE(deleted.ok()) << deleted.error().ToString();
  EXPECT_TRUE(fake_->ObjectNames("ckpt").empty());
  EXPECT_EQ(waits_.slept().size(), 3u) << "one wait for the 429, two for the 503s";
}

TEST_F(GcsClientTest, ARefusedDeleteNamesThePermissionAndStopsAsking) {
  for (int i = 0; i < 5; ++i) fake_->PutObject("ckpt", "p/" + std::to_string(i), "x");
  fake_->InjectFault("objects.delete", 403, "forbidden", 100);
  auto client = Client();
  ObjectResult<size_t> deleted = client->Delete({"p/0", "p/1", "p/2", "p/3", "p/4"});
  ASSERT_FALSE(deleted.ok());
  const std::string text = deleted.error().ToString();
  EXPECT_EQ(deleted.error().kind, CloudErrorKind::kAuth);
  EXPECT_NE(text.find("5 of 5 objects were not deleted"), std::string::npos) << text;
  EXPECT_NE(text.find("storage.objects.delete on gs://ckpt"), std::string::npos) << text;
  EXPECT_NE(text.find("forbidden"), std::string::npos) << text;
  EXPECT_EQ(fake_->CallCount("objects.delete"), 1) << "refused once, not asked four times more";
  EXPECT_TRUE(waits_.slept().empty());
}

TEST_F(GcsClientTest, ARevokedTokenIsReplacedOnce) {
  fake_->PutObject("ckpt", "p/0", "x");
  auto client = Client();
  ASSERT_TRUE(client->List("p/").ok());
  const int before = credentials_->fetches();
  fake_->RevokeTokens();
  ObjectResult<std::vector<ObjectInfo>> listed = client->List("p/");
  ASSERT_TRUE(listed.ok()) << listed.error().ToString();
  EXPECT_EQ(credentials_->fetches(), before + 1);
}

TEST_F(GcsClientTest, TheMetadataServersTokenIsAccepted) {
  fake_->PutObject("ckpt", "p/0", "x");
  auto metadata = std::make_shared<gcp::MetadataClient>(
      gcp::MetadataOptions{fake_->metadata_host(), std::chrono::seconds(2)});
  auto credentials = std::make_shared<gcp::GcpCredentials>(
      std::make_unique<gcp::MetadataTokenSource>(metadata, clock_), clock_);
  ObjectResult<std::vector<ObjectInfo>> listed = Client("ckpt", credentials)->List("p/");
  ASSERT_TRUE(listed.ok()) << listed.error().ToString();
  EXPECT_EQ(listed->size(), 1u);
}

TEST_F(GcsClientTest, NoTokenIsRefusedAndAMissingBucketIsNotFound) {
  GcsClientOptions options;
  options.bucket = "ckpt";
  options.endpoint_url = fake_->base_url();
  GcsClient anonymous(options, nullptr, waits_);
  ObjectResult<std::vector<ObjectInfo>> refused = anonymous.List("p/");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().http_status, 401);
  EXPECT_EQ(refused.error().kind, CloudErrorKind::kAuth);
  EXPECT_NE(refused.error().ToString().find("storage.objects.list"), std::string::npos)
      << refused.error().ToString();
  ObjectResult<std::vector<ObjectInfo>> missing = Client("no-such-bucket")->List("p/");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().kind, CloudErrorKind::kNotFound);
}

TEST_F(GcsClientTest, AnEndpointThatIsNotThereIsATransientErrorAfterTheRetries) {
  GcsClientOptions options;
  options.bucket = "ckpt";
  options.endpoint_url = "http://127.0.0.1:1";
  GcsClient client(options, credentials_, waits_);
  ObjectResult<std::vector<ObjectInfo>> listed = client.List("p/");
  ASSERT_FALSE(listed.ok());
  EXPECT_EQ(listed.error().kind, CloudErrorKind::kTransient);
  EXPECT_EQ(waits_.slept().size(), 4u) << "five attempts";
}

TEST(GcsAnswersTest, MalformedAnswersAreErrorsNotCrashes) {
  for (const char* body :
       {"", "null", "[]", "{\"items\": 3}", "{\"items\": [{\"size\": \"1\"}]}",
        "{\"items\": [{\"name\": \"a\", \"size\": \"-1\"}]}",
        "{\"items\": [{\"name\": \"a\", \"size\": \"99999999999999999999999\"}]}",
        "{\"items\": [{\"name\": \"a\"}]}", "{\"items\": [7]}"}) {
    ObjectResult<ListPage> page = ReadGcsListPage(body);
    EXPECT_FALSE(page.ok()) << body;
  }
  ObjectResult<ListPage> fine =
      ReadGcsListPage(R"({"items": [{"name": "a", "size": "12"}], "nextPageToken": "t"})");
  ASSERT_TRUE(fine.ok());
  EXPECT_EQ(fine->objects[0].size, 12u);
  EXPECT_EQ(fine->next_token, "t");
  EXPECT_TRUE(ReadGcsListPage("{}").ok()) << "an empty bucket's page has no items";

  ObjectStoreError error = ReadGcsError(
      "objects.delete", 403,
      R"({"error": {"code": 403, "message": "no", "errors": [{"reason": "forbidden"}]}})");
  EXPECT_EQ(error.code, "forbidden");
  EXPECT_EQ(error.kind, CloudErrorKind::kAuth);
  EXPECT_EQ(ReadGcsError("objects.list", 502, "<html>bad gateway</html>").kind,
            CloudErrorKind::kTransient);
  EXPECT_EQ(ReadGcsError("objects.list", 429, "{}").kind, CloudErrorKind::kThrottled);
  EXPECT_EQ(ReadGcsError("objects.delete", 403,
                         R"({"error": {"errors": [{"reason": "retentionPolicyNotMet"}]}})")
                .kind,
            CloudErrorKind::kInvalid)
      << "one object's retention is not the caller's permission";
  EXPECT_EQ(ReadGcsError("objects.list", 400, "{\"error\": 5}").kind, CloudErrorKind::kInvalid);
}

TEST(ListEveryPageTest, ARepeatedTokenIsAnErrorNotAnEndlessList) {
  int pages = 0;
  ObjectResult<std::vector<ObjectInfo>> listed =
      ListEveryPage("gcs", "objects.list", "b", [&](const std::string&) -> ObjectResult<ListPage> {
        ++pages;
        return ListPage{{{"k" + std::to_string(pages), 1}}, "same"};
      });
  ASSERT_FALSE(listed.ok());
  EXPECT_EQ(pages, 2);
  EXPECT_NE(listed.error().ToString().find("the same page token twice: same"), std::string::npos)
      << listed.error().ToString();
  EXPECT_EQ(listed.error().bucket, "b");
}

TEST(GcsEndpointTest, EmulatorHostReadsAsGoogleLibrariesReadIt) {
  EXPECT_EQ(GcsEndpointFor(""), "https://storage.googleapis.com");
  EXPECT_EQ(GcsEndpointFor("localhost:9023"), "http://localhost:9023");
  EXPECT_EQ(GcsEndpointFor("https://gcs.test/"), "https://gcs.test");
}

}  // namespace
}  // namespace det::object_store
