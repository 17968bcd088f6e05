// The project's harness (harness/det_harness.py with det_gcs.py) keeping checkpoints in Google
// Cloud Storage (the fake JSON API, on the fake Compute Engine's port): the example trial paused
// on one agent resumes on another that shares no folder with it, with the token of the metadata
// server's service account; the master's GC leaves what the policy keeps and `det experiment
// delete` empties the prefix; a service account key file works too, and a checkpoint above the
// chunk size goes up as a resumable upload and comes back whole, through a failed chunk and a
// failed listing.
#include <gtest/gtest.h>

#include "tests/fakes/fake_gce.h"
#include "tests/testing/harness_bucket_fixture.h"

namespace det {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

constexpr const char* kGcsBucket = "harness-gcs";

class HarnessGcsTest : public testing::HarnessBucketTest {
 protected:
  // The master (started by the fixture) and the agents find the fake as they would find Google:
  // STORAGE_EMULATOR_HOST for the API, GCE_METADATA_HOST for the metadata server's token.
  void SetUp() override {
    gcs_ = std::make_unique<testing::FakeGce>(testing::FakeGceOptions{});
    gcs_->Start();
    gcs_->CreateBucket(kGcsBucket);
    setenv("STORAGE_EMULATOR_HOST", EmulatorHost().c_str(), 1);
    setenv("GCE_METADATA_HOST", gcs_->metadata_host().c_str(), 1);
    HarnessBucketTest::SetUp();
  }
  void TearDown() override {
    HarnessBucketTest::TearDown();
    unsetenv("STORAGE_EMULATOR_HOST");
    unsetenv("GCE_METADATA_HOST");
    gcs_.reset();
  }
  std::string EmulatorHost() const { return "127.0.0.1:" + std::to_string(gcs_->port()); }
  // Trials reach the fake through STORAGE_EMULATOR_HOST in their environment, as a user's would
  // reach an emulator.
  std::string BucketConfig(const std::string& prefix,
                           const std::function<void(YAML::Node&)>& edit = {}) override {
    return Config("const.yaml", [&](YAML::Node& c) {
      YAML::Node storage;
      storage["type"] = "gcs";
      storage["bucket"] = kGcsBucket;
      storage["prefix"] = prefix;
      c["checkpoint_storage"] = storage;
      c["environment"]["environment_variables"].push_back("STORAGE_EMULATOR_HOST=" +
                                                          EmulatorHost());
      if (edit) edit(c);
    });
  }
  std::set<std::string> UuidsInBucket(const std::string& prefix) override {
    std::set<std::string> uuids;
    for (const std::string& name : gcs_->ObjectNames(kGcsBucket, prefix + "/")) {
      uuids.insert(name.substr(prefix.size() + 1, 36));
    }
    return uuids;
  }

  std::unique_ptr<testing::FakeGce> gcs_;
};

TEST_F(HarnessGcsTest, APausedTrialResumesOnAnotherAgentFromTheBucket) {
  ResumeOnAnotherAgentThenCollectAndDelete("runs/lr");
}

TEST_F(HarnessGcsTest, AKeyFileWorksAndLargeFilesGoUpInResumableChunks) {
  auto agent = StartAgent("agent-k", 1);
  const fs::path key_file = dir_ / "sa-key.json";
  gcs_->WriteServiceAccountKey(key_file);
  fs::permissions(key_file, fs::perms(0644));  // runs of a root agent are `nobody`
  const int tokens_before = gcs_->tokens_issued();
  // One chunk and the restore's listing fail as Google's backends sometimes do: both are
  // retried. (Not a ranged read: the fake's httplib would answer its error 416, sliced by Range.)
  gcs_->InjectFault("objects.insert.chunk", 503, "backendError", 1);
  gcs_->InjectFault("objects.list", 503, "backendError", 1);
  RoundTripALargeCheckpoint("big", {"HARNESS_GCS_CHUNK_SIZE=4194304",
                                    "GOOGLE_APPLICATION_CREDENTIALS=" + key_file.string()});
  EXPECT_GT(gcs_->tokens_issued(), tokens_before) << "the run signed in with the key";
  EXPECT_EQ(gcs_->CallCount("objects.insert.chunk"), 5)
      << "12 MiB in chunks of 4, one refused, the session asked where it stood, the chunk again";
  const std::vector<std::string> objects = gcs_->ObjectNames(kGcsBucket, "big/");
  ASSERT_EQ(objects.size(), 1u);
  EXPECT_EQ(gcs_->ObjectBytes(kGcsBucket, objects[0]).value_or("").size(), 12u << 20);
}

}  // namespace
}  // namespace det
