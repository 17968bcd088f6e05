// The fake S3 checked with the real `aws` CLI (Debian package awscli): the calls the checkpoint
// store and the harness make (and those `aws s3` makes around them) work against it as against
// S3, signatures, payload hashes and region redirects included, and its errors read as S3's.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <random>

#include "tests/testing/fake_cloud_process.h"
#include "tests/testing/test_util.h"

namespace det {
namespace {

namespace fs = std::filesystem;

class FakeS3CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("det-fake-s3-cli-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    fake_ = std::make_unique<testing::FakeS3Process>(
        dir_, std::vector<std::string>{"ckpt"},
        std::vector<std::string>{"--virtual-host-suffix", "s3.fake.test"});
    ASSERT_GT(fake_->port(), 0) << "fake-s3 did not start";
    const testing::CommandOutput& version = testing::AwsCliVersion();
    ASSERT_EQ(version.exit_code, 0) << "the aws CLI is needed (scripts/install-deps.sh installs "
                                       "awscli): "
                                    << version.output;
    // Parts of 5 MiB (S3's least) from 5 MiB on, so that a 12 MiB file goes up in three.
    std::ofstream(dir_ / "aws-config") << "[default]\ns3 =\n  multipart_threshold = 5MB\n"
                                          "  multipart_chunksize = 5MB\n";
  }
  void TearDown() override {
    fake_.reset();
    fs::remove_all(dir_);
  }
  // Runs `aws <args>` (with the config above and `env`); EXPECTs success.
  testing::CommandOutput Aws(const std::string& args, const std::string& env = "") {
    testing::CommandOutput out = testing::RunAws(
        fake_->endpoint(), args, "AWS_CONFIG_FILE=" + (dir_ / "aws-config").string() + " " + env);
    EXPECT_EQ(out.exit_code, 0) << args << "\n" << out.output;
    return out;
  }
  // Runs `aws <args>` expecting it to fail; its output.
  std::string AwsFails(const std::string& args, const std::string& env = "") {
    testing::CommandOutput out = testing::RunAws(fake_->endpoint(), args, env);
    EXPECT_NE(out.exit_code, 0) << args << "\n" << out.output;
    return out.output;
  }
  nlohmann::json Json(const std::string& args) {
    const testing::CommandOutput out = Aws(args);
    nlohmann::json json = nlohmann::json::parse(out.output, nullptr, false);
    EXPECT_FALSE(json.is_discarded()) << out.output;
    return json;
  }
  std::vector<std::string> Keys(const std::string& bucket, const std::string& prefix = "") {
    std::vector<std::string> keys;
    for (const auto& object : fake_->Admin("objects?bucket=" + bucket + "&prefix=" + prefix)) {
      keys.push_back(object["key"]);
    }
    return keys;
  }
  int Calls(const std::string& op) {
    int count = 0;
    for (const auto& call : fake_->Admin("calls")) count += call["op"] == op ? 1 : 0;
    return count;
  }
  fs::path RandomFile(const std::string& name, size_t size) {
    return testing::WriteRandomFile(dir_ / name, size);
  }
  static std::string Slurp(const fs::path& file) { return testing::ReadWholeFile(file); }

  fs::path dir_;
  std::unique_ptr<testing::FakeS3Process> fake_;
};

TEST_F(FakeS3CliTest, BucketsAndObjectsWorkWithTheAwsCli) {
  Aws("s3 mb s3://more");
  const std::string buckets = Aws("s3 ls").output;
  EXPECT_NE(buckets.find("ckpt"), std::string::npos) << buckets;
  EXPECT_NE(buckets.find("more"), std::string::npos) << buckets;

  std::ofstream(dir_ / "state.json") << R"({"step": 7})";
  // A key with a space and a '+': each is signed and decoded once, as S3 does.
  Aws("s3 cp " + (dir_ / "state.json").string() + " 's3://ckpt/exp/a b+c/state.json'");
  EXPECT_EQ(Keys("ckpt"), std::vector<std::string>{"exp/a b+c/state.json"});
  const std::string listed = Aws("s3 ls s3://ckpt/exp/").output;
  EXPECT_NE(listed.find("PRE a b+c/"), std::string::npos) << listed;

  Aws("s3 cp 's3://ckpt/exp/a b+c/state.json' " + (dir_ / "back.json").string());
  EXPECT_EQ(Slurp(dir_ / "back.json"), R"({"step": 7})");
  const nlohmann::json head = Json("s3api head-object --bucket ckpt --key 'exp/a b+c/state.json'");
  EXPECT_EQ(head["ContentLength"], 11);
  EXPECT_EQ(head["ETag"], "\"afe9161f7555a3ad08d2f1ceb7996883\"");  // the MD5 of the bytes
  const nlohmann::json range = Json(
      "s3api get-object --bucket ckpt --key 'exp/a b+c/state.json' "
      "--range bytes=1-6 " +
      (dir_ / "range").string());
  EXPECT_EQ(range["ContentRange"], "bytes 1-6/11");
  EXPECT_EQ(Slurp(dir_ / "range"), R"("step")");

  Aws("s3 rm --recursive s3://ckpt/exp/");
  EXPECT_TRUE(Keys("ckpt").empty());
  const std::string missing = AwsFails("s3api head-object --bucket ckpt --key nope");
  EXPECT_NE(missing.find("404"), std::string::npos) << missing;
  const std::string no_bucket = AwsFails("s3 ls s3://nobucket/");
  EXPECT_NE(no_bucket.find("NoSuchBucket"), std::string::npos) << no_bucket;
  Aws("s3 rb s3://more");
}

TEST_F(FakeS3CliTest, LargeFilesGoUpInPartsAndComeDownInRanges) {
  const fs::path big = RandomFile("big", 12 << 20);
  Aws("s3 cp --no-progress " + big.string() + " s3://ckpt/big");
  EXPECT_EQ(Calls("CreateMultipartUpload"), 1);
  EXPECT_EQ(Calls("UploadPart"), 3);
  EXPECT_EQ(Calls("CompleteMultipartUpload"), 1);
  const nlohmann::json objects = fake_->Admin("objects?bucket=ckpt&prefix=big");
  ASSERT_EQ(objects.size(), 1u);
  EXPECT_EQ(objects[0]["size"], 12 << 20);
  EXPECT_TRUE(objects[0]["etag"].get<std::string>().ends_with("-3\"")) << objects.dump();

  Aws("s3 cp --no-progress s3://ckpt/big " + (dir_ / "big.back").string());
  EXPECT_GE(Calls("GetObject"), 3) << "ranged downloads, one a part";
  EXPECT_TRUE(Slurp(dir_ / "big.back") == Slurp(big)) << "the bytes came back changed";
}

TEST_F(FakeS3CliTest, MultipartCallsCheckPartsAsS3Does) {
  const std::string id = Json("s3api create-multipart-upload --bucket ckpt --key mp")["UploadId"];
  std::ofstream(dir_ / "small") << "small part";
  Aws("s3api upload-part --bucket ckpt --key mp --part-number 1 --upload-id " + id + " --body " +
      (dir_ / "small").string());
  const nlohmann::json second = Json(
      "s3api upload-part --bucket ckpt --key mp --part-number 2 "
      "--upload-id " +
      id + " --body " + (dir_ / "small").string());
  const nlohmann::json parts = Json("s3api list-parts --bucket ckpt --key mp --upload-id " + id);
  ASSERT_EQ(parts["Parts"].size(), 2u);
  const std::string etag = second["ETag"];
  std::ofstream(dir_ / "parts.json") << nlohmann::json{{"Parts",
                                                        {{{"PartNumber", 1}, {"ETag", etag}},
                                                         {{"PartNumber", 2}, {"ETag", etag}}}}}
                                            .dump();
  const std::string too_small =
      AwsFails("s3api complete-multipart-upload --bucket ckpt --key mp --upload-id " + id +
               " --multipart-upload file://" + (dir_ / "parts.json").string());
  EXPECT_NE(too_small.find("EntityTooSmall"), std::string::npos) << too_small;
  Aws("s3api abort-multipart-upload --bucket ckpt --key mp --upload-id " + id);
  const std::string gone = AwsFails("s3api list-parts --bucket ckpt --key mp --upload-id " + id);
  EXPECT_NE(gone.find("NoSuchUpload"), std::string::npos) << gone;
  EXPECT_TRUE(Keys("ckpt").empty());
  EXPECT_TRUE(fs::is_empty(dir_ / "s3-data")) << "the parts' files were removed";
}

TEST_F(FakeS3CliTest, ListsComeInPagesAndDeleteObjectsReportsEachKey) {
  std::ofstream(dir_ / "f") << "x";
  for (const char* key : {"p/a", "p/b", "p/c/1", "p/c/2", "p/d", "q/e"}) {
    Aws("s3api put-object --bucket ckpt --key " + std::string(key) + " --body " +
        (dir_ / "f").string());
  }
  // The fake's pages hold what --page-size asks; the CLI follows the continuation tokens.
  const nlohmann::json all = Json("s3api list-objects-v2 --bucket ckpt --prefix p/ --page-size 2");
  EXPECT_EQ(all["Contents"].size(), 5u) << all.dump();
  EXPECT_EQ(Calls("ListObjectsV2"), 3);
  const nlohmann::json folded =
      Json("s3api list-objects-v2 --bucket ckpt --prefix p/ --delimiter / --page-size 1");
  EXPECT_EQ(folded["Contents"].size(), 3u) << folded.dump();
  ASSERT_EQ(folded["CommonPrefixes"].size(), 1u) << folded.dump();
  EXPECT_EQ(folded["CommonPrefixes"][0]["Prefix"], "p/c/");
  // Version 1 (boto3's bucket.objects.filter lists with it): markers instead of tokens.
  const nlohmann::json v1 = Json("s3api list-objects --bucket ckpt --prefix p/ --page-size 2");
  EXPECT_EQ(v1["Contents"].size(), 5u) << v1.dump();
  EXPECT_EQ(Calls("ListObjects"), 3);
  const nlohmann::json v1_folded =
      Json("s3api list-objects --bucket ckpt --prefix p/ --delimiter / --page-size 1");
  EXPECT_EQ(v1_folded["Contents"].size(), 3u) << v1_folded.dump();
  EXPECT_EQ(v1_folded["CommonPrefixes"].size(), 1u) << v1_folded.dump();

  fake_->Admin("key_fault", {{"code", "InternalError"}, {"times", 1}});
  const nlohmann::json deleted = Json(
      R"(s3api delete-objects --bucket ckpt --delete '{"Objects":[{"Key":"p/a"},{"Key":"p/b"},{"Key":"nope"}]}')");
  ASSERT_EQ(deleted["Errors"].size(), 1u) << deleted.dump();
  EXPECT_EQ(deleted["Errors"][0]["Key"], "p/a");
  EXPECT_EQ(deleted["Errors"][0]["Code"], "InternalError");
  EXPECT_EQ(deleted["Deleted"].size(), 2u) << "a missing key is deleted, as S3 says";
  EXPECT_EQ(Keys("ckpt", "p/"), (std::vector<std::string>{"p/a", "p/c/1", "p/c/2", "p/d"}));
}

TEST_F(FakeS3CliTest, SignaturesAndTokensAreCheckedAsS3ChecksThem) {
  const std::string keys = "AWS_ACCESS_KEY_ID=AKIDFAKE AWS_SECRET_ACCESS_KEY=wrong";
  EXPECT_NE(AwsFails("s3 ls s3://ckpt", keys).find("SignatureDoesNotMatch"), std::string::npos);
  EXPECT_NE(AwsFails("s3 ls s3://ckpt", "AWS_ACCESS_KEY_ID=AKIDOTHER").find("InvalidAccessKeyId"),
            std::string::npos);
  const std::string role =
      "AWS_ACCESS_KEY_ID=ASIAFAKE7 AWS_SECRET_ACCESS_KEY=role-secret-ASIAFAKE7";
  EXPECT_NE(AwsFails("s3 ls s3://ckpt", role).find("InvalidToken"), std::string::npos);
  Aws("s3 ls s3://ckpt", role + " AWS_SESSION_TOKEN=role-session-ASIAFAKE7");

  // A bucket in another region: S3 refuses the signature naming the region, and the CLI signs
  // again for it.
  fake_->Admin("buckets", {{"name", "far"}, {"region", "eu-west-1"}});
  std::ofstream(dir_ / "f") << "x";
  Aws("s3 cp " + (dir_ / "f").string() + " s3://far/f");
  EXPECT_EQ(Keys("far"), std::vector<std::string>{"f"});
  EXPECT_EQ(Calls("PutObject"), 2) << "refused once with the region, then signed for it";
}

TEST_F(FakeS3CliTest, ServerErrorsAreRetriedByTheCli) {
  fake_->Admin("fault", {{"op", "PutObject"}, {"code", "SlowDown"}, {"status", 503}, {"times", 2}});
  std::ofstream(dir_ / "f") << "x";
  Aws("s3api put-object --bucket ckpt --key f --body " + (dir_ / "f").string());
  EXPECT_EQ(Calls("PutObject"), 3);
  EXPECT_EQ(Keys("ckpt"), std::vector<std::string>{"f"});
}

TEST_F(FakeS3CliTest, VirtualHostStyleWorksWithTheAwsCli) {
  if (geteuid() != 0) {
    GTEST_SKIP() << "resolving BUCKET.s3.fake.test needs a hosts file of its own (unshare "
                    "--mount, as root)";
  }
  std::ofstream(dir_ / "hosts") << "127.0.0.1 localhost s3.fake.test ckpt.s3.fake.test\n";
  std::ofstream(dir_ / "virtual-config") << "[default]\ns3 =\n  addressing_style = virtual\n";
  std::ofstream(dir_ / "f") << "virtual";
  const std::string endpoint = "http://s3.fake.test:" + std::to_string(fake_->port());
  const std::string aws = testing::AwsCli() + " --endpoint-url " + endpoint;
  const std::string command =
      "unshare --mount sh -c 'mount --bind " + (dir_ / "hosts").string() +
      " /etc/hosts && export AWS_ACCESS_KEY_ID=AKIDFAKE AWS_SECRET_ACCESS_KEY=fake-secret "
      "AWS_DEFAULT_REGION=us-west-2 AWS_EC2_METADATA_DISABLED=true "
      "AWS_SHARED_CREDENTIALS_FILE=/dev/null AWS_CONFIG_FILE=" +
      (dir_ / "virtual-config").string() + " && " + aws + " s3 cp --no-progress " +
      (dir_ / "f").string() + " s3://ckpt/v && " + aws + " s3 ls s3://ckpt/'";
  const testing::CommandOutput out = testing::RunCommand(command);
  ASSERT_EQ(out.exit_code, 0) << out.output;
  EXPECT_NE(out.output.find(" v\n"), std::string::npos) << out.output;
  bool virtual_put = false;
  for (const auto& call : fake_->Admin("calls")) {
    virtual_put |= call["op"] == "PutObject" && call["virtual_host"] == true;
  }
  EXPECT_TRUE(virtual_put) << fake_->Admin("calls").dump();
  EXPECT_EQ(Keys("ckpt"), std::vector<std::string>{"v"});
}

}  // namespace
}  // namespace det
