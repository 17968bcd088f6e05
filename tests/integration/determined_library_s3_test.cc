// Determined 0.38.1's own library keeping checkpoints in S3 (its S3StorageManager, through
// Debian's python3-boto3) against the fake S3, with master.yaml's checkpoint_storage as
// `det deploy aws` writes it: a paused trial resumes on another agent that shares no folder with
// the first, the save_* policy's garbage collection leaves exactly the checkpoints it keeps in
// the bucket, and `det experiment delete` empties the experiment's keys. The master removes the
// objects itself (object_store/s3_client).
#include "tests/testing/determined_library_fixture.h"
#include "tests/testing/fake_cloud_process.h"

namespace det {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

constexpr const char* kLibraryBucket = "det-checkpoints";
constexpr const char* kLibraryPrefix = "team-a/exp";

class DeterminedLibraryS3Test : public testing::DeterminedLibraryTest {
 protected:
  std::string ExtraConfig() const override {
    return std::string("checkpoint_storage:\n  type: s3\n  bucket: ") + kLibraryBucket +
           "\n  prefix: /" + kLibraryPrefix +
           "/\n  access_key: AKIDFAKE\n  secret_key: fake-secret\n" +
           "  endpoint_url: http://127.0.0.1:" + std::to_string(s3_port_) + "\n";
  }
  void SetUp() override {
    const std::string probe = "/usr/bin/python3 -c 'import boto3' >/dev/null 2>&1";
    if (std::system(probe.c_str()) != 0) {
      GTEST_SKIP() << "needs python3-boto3 (Determined's S3 storage imports boto3; "
                      "scripts/install-deps.sh installs it)";
    }
    s3_dir_ = fs::temp_directory_path() / ("det-s3-" + bus::RandomId());
    fs::create_directories(s3_dir_);
    s3_ =
        std::make_unique<testing::FakeS3Process>(s3_dir_, std::vector<std::string>{kLibraryBucket});
    s3_port_ = s3_->port();
    DeterminedLibraryTest::SetUp();
  }
  void TearDown() override {
    DeterminedLibraryTest::TearDown();
    s3_.reset();
    if (!s3_dir_.empty()) fs::remove_all(s3_dir_);
  }
  // The checkpoint uuids that have objects in the bucket (the folder under the prefix).
  std::set<std::string> UuidsInBucket() {
    std::set<std::string> uuids;
    const std::string prefix = std::string(kLibraryPrefix) + "/";
    for (const std::string& key : KeysUnderPrefix()) {
      const std::string folder =
          key.substr(prefix.size(), key.find('/', prefix.size()) - prefix.size());
      // The library also syncs TensorBoard files, under the cluster id (no dashes).
      if (folder.size() == 36 && folder[8] == '-') uuids.insert(folder);
    }
    return uuids;
  }
  std::vector<std::string> KeysUnderPrefix() {
    std::vector<std::string> keys;
    for (const auto& object : s3_->Admin("objects?bucket=" + std::string(kLibraryBucket) +
                                         "&prefix=" + std::string(kLibraryPrefix) + "/")) {
      keys.push_back(object.value("key", ""));
    }
    return keys;
  }
  std::map<std::string, std::string> CheckpointStates(int64_t id) {
    std::map<std::string, std::string> states;
    const nlohmann::json listed = nlohmann::json::parse(
        Det("--json experiment list-checkpoints " + std::to_string(id)), nullptr, false);
    for (const auto& c : listed) states[c.value("uuid", "")] = c.value("state", "");
    return states;
  }
  static std::string Show(const std::set<std::string>& uuids) {
    std::string text;
    for (const std::string& uuid : uuids) text += uuid + " ";
    return text;
  }
  std::set<std::string> Completed(int64_t id) {
    std::set<std::string> uuids;
    for (const auto& [uuid, state] : CheckpointStates(id)) {
      if (state == "COMPLETED") uuids.insert(uuid);
    }
    return uuids;
  }

  // Determined's `det checkpoint download --mode master` from a host without the bucket's keys:
  // every object of the checkpoint arrives, at its size, through GET /checkpoints/{uuid}.
  void ExpectDownloadThroughTheMaster(const std::string& uuid) {
    const fs::path out = dir_ / ("downloaded-" + uuid);
    const std::string said =
        testing::Shell("{ env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY HOME=" + dir_.string() +
                       " PYTHONPATH=" + (testing::ConformanceDir() / "harness").string() +
                       " DET_MASTER=http://127.0.0.1:" + rest_port_ +
                       " DET_USER=admin DET_PASS=" + testing::kAdminPassword +
                       " timeout 120 /usr/bin/python3 -m determined.cli " +
                       "checkpoint download --mode master -o " + out.string() + " " + uuid +
                       "; echo rc=$?; } 2>&1");
    ASSERT_NE(said.find("rc=0"), std::string::npos) << said << Log("master.log");
    const std::string prefix = std::string(kLibraryPrefix) + "/" + uuid + "/";
    size_t compared = 0;
    for (const auto& object :
         s3_->Admin("objects?bucket=" + std::string(kLibraryBucket) + "&prefix=" + prefix)) {
      const fs::path file = out / object.value("key", "").substr(prefix.size());
      EXPECT_TRUE(fs::exists(file)) << file << "\n" << said;
      if (fs::exists(file)) {
        EXPECT_EQ(fs::file_size(file), object.value("size", uint64_t{0})) << file;
      }
      ++compared;
    }
    EXPECT_GT(compared, 0u) << "the checkpoint has objects";
  }

  fs::path s3_dir_;
  std::unique_ptr<testing::FakeS3Process> s3_;
  int s3_port_ = 0;
};

TEST_F(DeterminedLibraryS3Test, ResumesOnAnotherAgentAndGarbageCollectsTheBucket) {
  StartAgents(1, 8);
  const int64_t id = Submit("2_checkpoints");
  ASSERT_TRUE(WaitForTrainingReports(id, 3)) << Logs(id);
  Det("experiment pause " + std::to_string(id));
  ASSERT_TRUE(WaitForTrial(id, [](auto& t) { return t.value("task_state", "") != "RUNNING"; }));
  ASSERT_FALSE(UuidsInBucket().empty()) << "run 1 checkpointed to the bucket\n" << Logs(id);

  // The first agent goes, its folder with it; the second shares nothing with it.
  agents_.clear();
  fs::remove_all(dir_ / "work-agent-0");
  agents_.push_back(StartAgent("agent-1", 8));
  // Activated before the master counts agent-0 lost, run 2 could be placed there and fail.
  ASSERT_TRUE(testing::Eventually(
      [&] { return Log("master.log").find("agent agent-0 lost") != std::string::npos; }, 30s));
  Det("experiment activate " + std::to_string(id));
  ASSERT_EQ(WaitEnded(id), "COMPLETED") << Logs(id);
  const nlohmann::json trial = Describe(id)["trials"][0];
  EXPECT_EQ(trial.value("run_id", 0), 2) << trial.dump();
  EXPECT_EQ(trial["best_validation"].value("x", 0), 100) << trial.dump();
  const std::string logs = Logs(id);
  const size_t batches = Occurrences(logs, "x is now ");
  EXPECT_LT(batches, 115u) << "run 2 did not resume from run 1's checkpoint in S3: " << logs;
  EXPECT_FALSE(fs::exists(dir_ / "checkpoints" / "determined-checkpoint")) << "no folder used";

  // The policy (save_trial_best 1, save_trial_latest 1) keeps at most two; the rest are removed
  // from the bucket by the master.
  ASSERT_TRUE(testing::Eventually(
      [&] {
        // Until the master's GC has run, every checkpoint is COMPLETED and in the bucket.
        const std::set<std::string> kept = Completed(id);
        return kept.size() <= 2 && UuidsInBucket() == kept;
      },
      60s))
      << "in the bucket: " << Show(UuidsInBucket()) << "\nCOMPLETED: " << Show(Completed(id))
      << "\n"
      << s3_->Admin("objects?bucket=" + std::string(kLibraryBucket)).dump() << "\n"
      << Log("master.log");
  EXPECT_LE(Completed(id).size(), 2u);
  EXPECT_GT(CheckpointStates(id).size(), Completed(id).size()) << "some were DELETED";
  EXPECT_EQ(Log("master.log").find("fake-secret"), std::string::npos) << "no key logged";
  const std::set<std::string> kept = Completed(id);
  ASSERT_FALSE(kept.empty());
  ExpectDownloadThroughTheMaster(*kept.begin());

  EXPECT_NE(Det("experiment delete --yes " + std::to_string(id)).find("DELETING"),
            std::string::npos);
  ASSERT_TRUE(WaitDeleted(id)) << Log("master.log");
  EXPECT_TRUE(KeysUnderPrefix().empty())
      << "delete left objects in the bucket: " << KeysUnderPrefix().size();
}

// The bucket refuses deletes: `det experiment delete` fails naming the permission, keeps the
// experiment, and succeeds once the bucket lets it.
TEST_F(DeterminedLibraryS3Test, ADeleteTheBucketRefusesFailsNamingThePermission) {
  StartAgents(1, 8);
  const int64_t id = Submit("2_checkpoints");
  ASSERT_EQ(WaitEnded(id), "COMPLETED") << Logs(id);
  ASSERT_TRUE(testing::Eventually(
      [&] {
        // Until the master's GC has run, every checkpoint is COMPLETED and in the bucket.
        const std::set<std::string> kept = Completed(id);
        return kept.size() <= 2 && UuidsInBucket() == kept;
      },
      60s))
      << "in the bucket: " << Show(UuidsInBucket()) << "\nCOMPLETED: " << Show(Completed(id));
  s3_->Admin("fault",
             {{"op", "DeleteObjects"}, {"code", "AccessDenied"}, {"status", 403}, {"times", 1}});
  Det("experiment delete --yes " + std::to_string(id));
  ASSERT_TRUE(testing::Eventually(
      [&] {
        return Det("experiment describe " + std::to_string(id)).find("DELETE_FAILED") !=
               std::string::npos;
      },
      60s))
      << Log("master.log");
  EXPECT_NE(Log("master.log").find("s3:DeleteObject on arn:aws:s3:::det-checkpoints/*"),
            std::string::npos)
      << Log("master.log");
  EXPECT_FALSE(UuidsInBucket().empty());
  Det("experiment delete --yes " + std::to_string(id));
  ASSERT_TRUE(WaitDeleted(id)) << Log("master.log");
  EXPECT_TRUE(KeysUnderPrefix().empty());
}

}  // namespace
}  // namespace det
