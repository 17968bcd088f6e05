#pragma once

// The project's harness keeping checkpoints in a bucket (S3, GCS;
// tests/integration/harness_*_test.cc): the scenarios every bucket type must pass, each test
// fixture saying how its config names the bucket and what the bucket holds.

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "tests/testing/experiment_fixture.h"

namespace det::testing {

class HarnessBucketTest : public ExperimentFixture {
 protected:
  // The example's config with checkpoints in the test's bucket under `prefix`, after `edit`.
  virtual std::string BucketConfig(const std::string& prefix,
                                   const std::function<void(YAML::Node&)>& edit = {}) = 0;
  // The checkpoint uuids with objects under `prefix`/ in the bucket.
  virtual std::set<std::string> UuidsInBucket(const std::string& prefix) = 0;

  std::set<std::string> Completed(int64_t id) {
    return CompletedCheckpoints(Det("--json experiment list-checkpoints " + std::to_string(id)));
  }

  // The example trial checkpoints under `prefix` on agent-a and is paused; agent-a goes with its
  // folder, and the trial resumes on agent-b from the bucket. The master's GC then leaves in the
  // bucket exactly the checkpoints still COMPLETED (at most two), and `det experiment delete`
  // empties the prefix.
  void ResumeOnAnotherAgentThenCollectAndDelete(const std::string& prefix) {
    using namespace std::chrono_literals;
    auto agent_a = StartAgent("agent-a", 1);
    const int64_t id = Create(
        BucketConfig(prefix, [](YAML::Node& c) { c["hyperparameters"]["step_seconds"] = 0.02; }));
    ASSERT_TRUE(WaitForTrial(id, [](auto& t) { return t.value("steps_completed", 0) >= 40; }))
        << Log("master.log");
    Det("experiment pause " + std::to_string(id));
    ASSERT_TRUE(WaitForTrial(id, [](auto& t) { return t.value("task_state", "") == ""; }));
    ASSERT_FALSE(UuidsInBucket(prefix).empty()) << Det("experiment logs " + std::to_string(id));
    agent_a.reset();
    fs::remove_all(dir_ / "work-agent-a");
    auto agent_b = StartAgent("agent-b", 1);
    ASSERT_TRUE(Eventually(
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
    ASSERT_TRUE(Eventually(
        [&] {
          const std::set<std::string> kept = Completed(id);
          return kept.size() <= 2 && UuidsInBucket(prefix) == kept;
        },
        60s))
        << Log("master.log");
    Det("experiment delete --yes " + std::to_string(id));
    ASSERT_TRUE(WaitDeleted(id)) << Log("master.log");
    EXPECT_TRUE(UuidsInBucket(prefix).empty());
  }

  // A run that stores a 12 MiB random file as a checkpoint under `prefix`, restores it and
  // compares, with `variables` in its environment; the experiment's logs once it completed
  // (a failure is recorded when it did not, or the file came back changed).
  std::string RoundTripALargeCheckpoint(const std::string& prefix,
                                        const std::vector<std::string>& variables) {
    fs::create_directories(dir_ / "big");
    std::ofstream(dir_ / "big" / "big.py") << R"PY(
import os
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
    YAML::Node config = YAML::LoadFile(BucketConfig(prefix));
    config["entrypoint"] = "python3 big.py";
    for (const char* length : {"max_length", "time_metric", "max_time"}) {
      config["searcher"].remove(length);  // the run ends when its code does
    }
    config.remove("min_validation_period");
    config["max_restarts"] = 0;
    for (const std::string& variable : variables) {
      config["environment"]["environment_variables"].push_back(variable);
    }
    std::ofstream(dir_ / "big" / "big.yaml") << YAML::Dump(config);
    const std::string out = Det("--json experiment create " + (dir_ / "big" / "big.yaml").string() +
                                " " + (dir_ / "big").string());
    const int64_t id = nlohmann::json::parse(out, nullptr, false).value("id", int64_t{0});
    EXPECT_GT(id, 0) << out;
    if (id <= 0) return "";
    const std::string state = WaitEnded(id);
    const std::string logs = Det("experiment logs " + std::to_string(id));
    EXPECT_EQ(state, "COMPLETED") << logs;
    EXPECT_NE(logs.find("ROUND TRIP same 12582912"), std::string::npos) << logs;
    return logs;
  }
};

}  // namespace det::testing
