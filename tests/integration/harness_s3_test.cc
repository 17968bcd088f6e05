// The project's harness (harness/det_harness.py with det_storage.py) keeping checkpoints in S3
// (the fake S3): the example trial paused on one agent resumes on another that shares no folder
// with it, the master's GC leaves what the policy keeps and `det experiment delete` empties the
// prefix; without keys in the config, runs use the instance role from IMDSv2 (the fake EC2's),
// and a checkpoint above the part size goes up in parts and comes back whole.
#include <gtest/gtest.h>

#include "tests/fakes/fake_ec2.h"
#include "tests/testing/fake_cloud_process.h"
#include "tests/testing/harness_bucket_fixture.h"

namespace det {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

constexpr const char* kHarnessBucket = "harness-ckpt";

class HarnessS3Test : public testing::HarnessBucketTest {
 protected:
  void SetUp() override {
    HarnessBucketTest::SetUp();
    s3_ = std::make_unique<testing::FakeS3Process>(dir_, std::vector<std::string>{kHarnessBucket});
  }
  void TearDown() override {
    s3_.reset();
    HarnessBucketTest::TearDown();
  }
  // Checkpoints in the bucket with the fake's access key in the config, unless keys_ is false
  // (runs then find the instance role).
  std::string BucketConfig(const std::string& prefix,
                           const std::function<void(YAML::Node&)>& edit = {}) override {
    return Config("const.yaml", [&](YAML::Node& c) {
      YAML::Node storage;
      storage["type"] = "s3";
      storage["bucket"] = kHarnessBucket;
      storage["prefix"] = prefix;
      storage["endpoint_url"] = s3_->endpoint();
      if (keys_) {
        storage["access_key"] = "AKIDFAKE";
        storage["secret_key"] = "fake-secret";
      }
      c["checkpoint_storage"] = storage;
      if (edit) edit(c);
    });
  }
  std::set<std::string> UuidsInBucket(const std::string& prefix) override {
    std::set<std::string> uuids;
    for (const auto& object :
         s3_->Admin("objects?bucket=" + std::string(kHarnessBucket) + "&prefix=" + prefix + "/")) {
      const std::string key = object.value("key", "");
      uuids.insert(key.substr(prefix.size() + 1, 36));
    }
    return uuids;
  }

  std::unique_ptr<testing::FakeS3Process> s3_;
  bool keys_ = true;
};

TEST_F(HarnessS3Test, APausedTrialResumesOnAnotherAgentFromTheBucket) {
  ResumeOnAnotherAgentThenCollectAndDelete("runs/lr");
}

TEST_F(HarnessS3Test, RunsUseTheInstanceRoleAndLargeFilesGoUpInParts) {
  testing::FakeEc2 imds({});
  imds.Start();
  setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT",
         ("http://127.0.0.1:" + std::to_string(imds.port())).c_str(), 1);
  auto agent = StartAgent("agent-r", 1);
  unsetenv("AWS_EC2_METADATA_SERVICE_ENDPOINT");
  keys_ = false;
  RoundTripALargeCheckpoint("big", {"HARNESS_S3_PART_SIZE=5242880"});
  EXPECT_GE(imds.credentials_served(), 1) << "the run found the role";
  int parts = 0;
  for (const auto& call : s3_->Admin("calls")) parts += call["op"] == "UploadPart" ? 1 : 0;
  EXPECT_EQ(parts, 3) << "12 MiB in parts of 5 MiB";
  const nlohmann::json objects =
      s3_->Admin("objects?bucket=" + std::string(kHarnessBucket) + "&prefix=big/");
  ASSERT_EQ(objects.size(), 1u) << objects.dump();
  EXPECT_EQ(objects[0].value("size", 0), 12 << 20);
}

}  // namespace
}  // namespace det
