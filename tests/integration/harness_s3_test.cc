// The project's harness (harness/det_harness.py with det_storage.py) keeping checkpoints in S3
// (the fake S3): the example trial paused on one agent resumes on another that shares no folder
// with it, the master's GC leaves what the policy keeps and `det experiment delete` empties the
// prefix; without keys in the config, runs use the instance role from IMDSv2 (the fake EC2's),
// and a checkpoint above the part size goes up in parts and comes back whole.
#include <gtest/gtest.h>

#include "tests/fakes/fake_ec2.h"
#include "tests/testing/experiment_fixture.h"
#include "tests/testing/fake_cloud_process.h"

namespace det {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

constexpr const char* kHarnessBucket = "harness-ckpt";

class HarnessS3Test : public testing::ExperimentFixture {
 protected:
  void SetUp() override {
    ExperimentFixture::SetUp();
    s3_ = std::make_unique<testing::FakeS3Process>(dir_, std::vector<std::string>{kHarnessBucket});
  }
  void TearDown() override {
    s3_.reset();
    ExperimentFixture::TearDown();
  }
  // The example's config with checkpoints in the bucket under `prefix`; with `keys`, the fake's
  // access key in the config, else none (runs find the instance role).
  std::string S3Config(const std::string& prefix, bool keys,
                       const std::function<void(YAML::Node&)>& edit = {}) {
    return Config("const.yaml", [&](YAML::Node& c) {
      YAML::Node storage;
      storage["type"] = "s3";
      storage["bucket"] = kHarnessBucket;
      storage["prefix"] = prefix;
      storage["endpoint_url"] = s3_->endpoint();
      if (keys) {
        storage["access_key"] = "AKIDFAKE";
        storage["secret_key"] = "fake-secret";
      }
      c["checkpoint_storage"] = storage;
      if (edit) edit(c);
    });
  }
  std::set<std::string> UuidsInBucket(const std::string& prefix) {
    std::set<std::string> uuids;
    for (const auto& object :
         s3_->Admin("objects?bucket=" + std::string(kHarnessBucket) + "&prefix=" + prefix + "/")) {
      const std::string key = object.value("key", "");
      uuids.insert(key.substr(prefix.size() + 1, 36));
    }
    return uuids;
  }
  std::set<std::string> Completed(int64_t id) {
    std::set<std::string> uuids;
    const nlohmann::json listed = nlohmann::json::parse(
        Det("--json experiment list-checkpoints " + std::to_string(id)), nullptr, false);
    for (const auto& c : listed) {
      if (c.value("state", "") == "COMPLETED") uuids.insert(c.value("uuid", ""));
    }
    return uuids;
  }

  std::unique_ptr<testing::FakeS3Process> s3_;
};

TEST_F(HarnessS3Test, APausedTrialResumesOnAnotherAgentFromTheBucket) {
  auto agent_a = StartAgent("agent-a", 1);
  const int64_t id = Create(S3Config(
      "runs/lr", true, [](YAML::Node& c) { c["hyperparameters"]["step_seconds"] = 0.02; }));
  ASSERT_TRUE(WaitForTrial(id, [](auto& t) { return t.value("steps_completed", 0) >= 40; }))
      << Log("master.log");
  Det("experiment pause " + std::to_string(id));
  ASSERT_TRUE(WaitForTrial(id, [](auto& t) { return t.value("task_state", "") == ""; }));
  ASSERT_FALSE(UuidsInBucket("runs/lr").empty());
  agent_a.reset();
  fs::remove_all(dir_ / "work-agent-a");
  auto agent_b = StartAgent("agent-b", 1);
  ASSERT_TRUE(testing::Eventually(
      [&] { return Log("master.log").find("agent agent-a lost") != std::string::npos; }, 30s));
  Det("experiment activate " + std::to_string(id));
  ASSERT_EQ(WaitEnded(id), "COMPLETED") << Log("master.log");
  const nlohmann::json trial = Describe(id)["trials"][0];
  EXPECT_EQ(trial.value("run_id", 0), 2) << trial.dump();
  const std::string logs = Det("trial logs " + std::to_string(trial.value("id", 0)));
  const size_t stopped = logs.find("stopping at step ");
  ASSERT_NE(stopped, std::string::npos) << logs;
  const int stop_step = std::atoi(logs.c_str() + stopped + strlen("stopping at step "));
  EXPECT_NE(logs.find("run 2: starting at step " + std::to_string(stop_step) + " "),
            std::string::npos)
      << "run 2 did not resume from run 1's checkpoint in the bucket: " << logs;
  EXPECT_FALSE(fs::exists(dir_ / "checkpoints")) << "no folder used";

  // Until the master's GC has run, every checkpoint is COMPLETED and in the bucket.
  ASSERT_TRUE(testing::Eventually(
      [&] {
        const std::set<std::string> kept = Completed(id);
        return kept.size() <= 2 && UuidsInBucket("runs/lr") == kept;
      },
      60s))
      << Log("master.log");
  EXPECT_LE(Completed(id).size(), 2u);
  Det("experiment delete --yes " + std::to_string(id));
  ASSERT_TRUE(WaitDeleted(id)) << Log("master.log");
  EXPECT_TRUE(UuidsInBucket("runs/lr").empty());
}

TEST_F(HarnessS3Test, RunsUseTheInstanceRoleAndLargeFilesGoUpInParts) {
  testing::FakeEc2 imds({});
  imds.Start();
  setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT",
         ("http://127.0.0.1:" + std::to_string(imds.port())).c_str(), 1);
  auto agent = StartAgent("agent-r", 1);
  unsetenv("AWS_EC2_METADATA_SERVICE_ENDPOINT");
  fs::create_directories(dir_ / "big");
  std::ofstream(dir_ / "big" / "big.py") << R"PY(
import hashlib, os
import det_harness
ctx = det_harness.init()
data = os.urandom(12 << 20)
with ctx.store_checkpoint(1) as (folder, uuid):
    with open(os.path.join(folder, "weights.bin"), "wb") as f:
        f.write(data)
folder = ctx.restore_checkpoint(uuid)
with open(os.path.join(folder, "weights.bin"), "rb") as f:
    back = f.read()
print("ROUND TRIP", "same" if back == data else "changed", len(back), flush=True)
ctx.report_validation_metrics(1, {"validation_loss": 0.0})
)PY";
  YAML::Node config = YAML::LoadFile(S3Config("big", false));
  config["entrypoint"] = "python3 big.py";
  config["searcher"].remove("max_length");  // the run ends when its code does
  config.remove("min_validation_period");
  config["max_restarts"] = 0;
  config["environment"]["environment_variables"].push_back("HARNESS_S3_PART_SIZE=5242880");
  std::ofstream(dir_ / "big" / "big.yaml") << YAML::Dump(config);
  const std::string out = Det("--json experiment create " + (dir_ / "big" / "big.yaml").string() +
                              " " + (dir_ / "big").string());
  const int64_t id = nlohmann::json::parse(out, nullptr, false).value("id", int64_t{0});
  ASSERT_GT(id, 0) << out;
  ASSERT_EQ(WaitEnded(id), "COMPLETED") << Det("experiment logs " + std::to_string(id));
  const std::string logs = Det("experiment logs " + std::to_string(id));
  EXPECT_NE(logs.find("ROUND TRIP same 12582912"), std::string::npos) << logs;
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
