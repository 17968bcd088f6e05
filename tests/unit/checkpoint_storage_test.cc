// Checkpoints in buckets, the master's side: Determined's key layout, how a trial on s3 storage
// is launched (no folder, no mount), and the remover that deletes a checkpoint's objects (against
// the fake S3).
#include <gtest/gtest.h>

#include "master/experiments/bucket_remover.h"
#include "master/experiments/trial_launch.h"
#include "object_store/checkpoint_keys.h"
#include "object_store/s3_client.h"
#include "tests/fakes/fake_s3.h"
#include "tests/testing/test_util.h"

namespace det {
namespace {

TEST(CheckpointKeysTest, PrefixesAreNormalizedAsDeterminedsLibraryNormalizesThem) {
  // Python's os.path.normpath(p).lstrip("/") for each (Determined's normalize_prefix).
  const std::vector<std::pair<std::string, std::string>> cases = {{"", ""},
                                                                  {"a", "a"},
                                                                  {"a/", "a"},
                                                                  {"/a/b/", "a/b"},
                                                                  {"a//b", "a/b"},
                                                                  {"./a", "a"},
                                                                  {".", "."},
                                                                  {"./", "."},
                                                                  {"/", ""},
                                                                  {"//x", "x"},
                                                                  {"a/./b/.", "a/b"},
                                                                  {"a/b/..", "a"},
                                                                  {"a/..", "."},
                                                                  {"/../a", "a"},
                                                                  {"..a/b..", "..a/b.."},
                                                                  {"a b/c+d", "a b/c+d"}};
  for (const auto& [prefix, normalized] : cases) {
    EXPECT_EQ(object_store::NormalizePrefix(prefix), normalized) << "\"" << prefix << "\"";
  }
  const std::string uuid = "0b5e3e10-52c1-4c5b-8a3e-9a0c5d1e2f3a";
  EXPECT_EQ(object_store::CheckpointKeyPrefix("", uuid), uuid + "/");
  EXPECT_EQ(object_store::CheckpointKeyPrefix("/team/exp/", uuid), "team/exp/" + uuid + "/");
  EXPECT_EQ(object_store::CheckpointKeyPrefix(".", uuid), "./" + uuid + "/");
  EXPECT_EQ(object_store::TensorboardKeyPrefix("/team/exp/", "c0737eae", 12),
            "team/exp/c0737eae/tensorboard/experiment/12/");
}

TEST(CheckpointStorageLaunchTest, ABucketNeedsNoFolderAndNoMount) {
  master::experiment::ExperimentConfig config;
  config.checkpoint_storage.type = "s3";
  config.checkpoint_storage.bucket = "ckpt";
  EXPECT_TRUE(master::ContainerOf(config).binds.empty());
  const bus::CommandRunRequest spec = master::TrialTaskSpec(config, {}, {}, {"{}", "alice"});
  EXPECT_EQ(spec.env.count("DET_CHECKPOINT_DIR"), 0u);

  config.checkpoint_storage = {};
  config.checkpoint_storage.host_path = "/srv/ckpt";
  config.checkpoint_storage.storage_path = "det";
  EXPECT_EQ(master::ContainerOf(config).binds, std::vector<std::string>{"/srv/ckpt:/srv/ckpt"});
  EXPECT_EQ(master::TrialTaskSpec(config, {}, {}, {"{}", "alice"}).env.at("DET_CHECKPOINT_DIR"),
            "/srv/ckpt/det");
}

class BucketRemoverTest : public ::testing::Test {
 protected:
  void SetUp() override { fake_.Start(); }
  master::BucketRemover::Opener Opener() {
    return [this](const object_store::BucketSpec& spec)
               -> Result<std::unique_ptr<object_store::ObjectStore>> {
      ++opened_;
      object_store::S3ClientOptions options;
      options.bucket = spec.bucket;
      options.endpoint_url = spec.endpoint_url;
      options.retry.max_attempts = 2;
      return std::unique_ptr<object_store::ObjectStore>(new object_store::S3Client(
          options,
          std::make_shared<aws::CredentialsChain>(
              aws::AwsEnvironment::Of({{"AWS_ACCESS_KEY_ID", spec.access_key},
                                       {"AWS_SECRET_ACCESS_KEY", spec.secret_key}}),
              nullptr, clock_),
          waits_));
    };
  }
  std::vector<master::BucketRemover::Done> WaitDone(master::BucketRemover& remover, size_t count) {
    std::vector<master::BucketRemover::Done> done;
    det::testing::WaitFor([&] {
      for (auto& d : remover.TakeDone()) done.push_back(std::move(d));
      return done.size() >= count;
    });
    return done;
  }
  object_store::BucketSpec Spec() {
    return {"s3", "ckpt", "AKIDFAKE", "fake-secret", fake_.endpoint()};
  }

  RealClock clock_;
  SimulatedClock waits_{SimulatedClock::Sleeps::kSleepAdvances};  // the clients' waits, recorded
  testing::FakeS3 fake_{{}};
  int opened_ = 0;
};

TEST_F(BucketRemoverTest, RemovesEveryObjectOfTheCheckpointsAndNothingElse) {
  for (const char* key : {"exp/u1/state.json", "exp/u1/model/weights.bin", "exp/u2/state.json",
                          "exp/u10/state.json", "other/u1/x"}) {
    fake_.Put("ckpt", key, std::string(10, 'x'));
  }
  master::BucketRemover remover(Opener());
  remover.Submit({"job-1", Spec(), {"exp/u1/", "exp/u2/", "exp/gone/"}});
  auto done = WaitDone(remover, 1);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_TRUE(done[0].outcome.ok()) << done[0].outcome.ToString();
  EXPECT_EQ(done[0].objects, 3u);
  EXPECT_EQ(done[0].bytes, 30u);
  std::vector<std::string> left;
  for (const auto& object : fake_.Objects("ckpt")) left.push_back(object["key"]);
  EXPECT_EQ(left, (std::vector<std::string>{"exp/u10/state.json", "other/u1/x"}))
      << "u10 only shares u1's first characters";

  remover.Submit({"job-2", Spec(), {"exp/u10/"}});
  ASSERT_EQ(WaitDone(remover, 1).size(), 1u);
  EXPECT_EQ(opened_, 1) << "the bucket's client is kept for the next job";
}

TEST_F(BucketRemoverTest, ARefusedDeleteIsAnOutcomeNamingThePermission) {
  fake_.Put("ckpt", "u1/state.json", "x");
  fake_.InjectFault("DeleteObjects", "AccessDenied", 403, 1);
  master::BucketRemover remover(Opener());
  remover.Submit({"job-1", Spec(), {"u1/"}});
  auto done = WaitDone(remover, 1);
  ASSERT_EQ(done.size(), 1u);
  ASSERT_FALSE(done[0].outcome.ok());
  EXPECT_NE(done[0].outcome.message().find("s3:DeleteObject on arn:aws:s3:::ckpt/*"),
            std::string::npos)
      << done[0].outcome.message();
  EXPECT_EQ(fake_.Objects("ckpt").size(), 1u);
}

TEST_F(BucketRemoverTest, ABucketThatCannotBeOpenedIsAnOutcomeToo) {
  master::BucketRemover remover(
      [](const object_store::BucketSpec&) -> Result<std::unique_ptr<object_store::ObjectStore>> {
        return InvalidArgument("no client for checkpoint storage type \"gcs\"");
      });
  remover.Submit({"job-1", {"gcs", "b", "", "", ""}, {"u1/"}});
  auto done = WaitDone(remover, 1);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_NE(done[0].outcome.message().find("gcs"), std::string::npos);
}

}  // namespace
}  // namespace det
