// The autoscaler over separate hosts (multihost_fixture.h): det-autoscaler on its own host sizes
// the pool `cloud` through the fake EC2 on another, whose instances boot as hosts of their own and
// run real det-agents. Each test injects faults on the way, then checks that nothing was lost
// (CheckNothingLost) and that no instance is left running (CheckNoInstanceLeft).
#include <signal.h>

#include <thread>

#include "tests/multihost/multihost_fixture.h"
#include "tests/testing/test_util.h"

namespace det::testing {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr TrialShape kCloudShape{200, 20};
constexpr double kCloudStepSeconds = 0.08;

class CloudFaultTest : public MultiHostTest {
 protected:
  std::string ExtraMasterConfig() const override { return CloudPools(); }
  void SetUp() override {
    MultiHostTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ASSERT_NO_FATAL_FAILURE(StartCloud());
  }
  // The experiment on the cloud pool; with `s3_bucket`, its checkpoints in the fake S3 (the
  // fake's keys) instead of the folder every host shares.
  int64_t CreateCloudExperiment(const std::string& s3_bucket = "") {
    return CreateExperiment(kCloudShape, kCloudStepSeconds, [&](nlohmann::json& config) {
      config["resources"]["resource_pool"] = "cloud";
      if (s3_bucket.empty()) return;
      config["checkpoint_storage"] = {{"type", "s3"},
                                      {"bucket", s3_bucket},
                                      {"prefix", "multihost"},
                                      {"endpoint_url", S3Endpoint()},
                                      {"access_key", "AKIDFAKE"},
                                      {"secret_key", "fake-secret"}};
    });
  }
  int CallCount(const std::string& action) {
    int count = 0;
    for (const auto& call : CloudAdmin("calls")) count += call.value("action", "") == action;
    return count;
  }
  // "id state, ..." of every instance the fake launched.
  std::string InstanceSummary() {
    std::string summary;
    for (const auto& i : Instances()) {
      summary += i.value("id", "") + " " + i.value("state", "") + ", ";
    }
    return summary;
  }
  // Seconds from `since` until the experiment's trial reports its first training metrics (-1:
  // never).
  double SecondsUntilFirstMetrics(int64_t experiment_id, Clock::time_point since) {
    const bool reported = Eventually(
        [&] {
          auto trials = Describe(experiment_id)["trials"];
          return trials.is_array() && !trials.empty() &&
                 !MetricSteps(trials[0].value("id", int64_t{0}), "training").empty();
        },
        120s);
    return reported ? std::chrono::duration<double>(Clock::now() - since).count() : -1;
  }
};

// The autoscaler dies while its RunInstances call is in flight (EC2 is slow to answer, and the
// instance is made after all). Restarted, it finds the instance by its tags: no second one.
TEST_F(CloudFaultTest, AutoscalerKilledDuringAScaleUpLaunchesNoDuplicate) {
  ASSERT_TRUE(CloudAdmin("fault", {{"action", "RunInstances"}, {"delay_ms", 3000}, {"times", 1}})
                  .value("ok", false));
  StartAutoscaler();
  const auto created = Clock::now();
  const int64_t id = CreateCloudExperiment();
  ASSERT_GT(id, 0);
  ASSERT_TRUE(Eventually([&] { return CallCount("RunInstances") >= 1; }, 30s))
      << ReadLog("autoscaler.log");
  autoscaler_->Stop(SIGKILL);  // mid-call: the answer never reaches it
  const auto fault = Clock::now();
  ASSERT_TRUE(Eventually([&] { return Instances().size() == 1; }, 10s)) << InstanceSummary();
  StartAutoscaler();
  const double recovery = SecondsUntilFirstMetrics(id, fault);
  CheckNothingLost(id, kCloudShape);
  EXPECT_EQ(Instances().size(), 1u) << "a second instance was launched: " << InstanceSummary();
  CheckNoInstanceLeft();
  Report("`kill -9` the autoscaler during a scale-up (RunInstances in flight)",
         "the restarted autoscaler adopts the instance by its tags; no duplicate launch", recovery);
  std::cout << "first metrics " << SecondsUntilFirstMetrics(id, created)
            << " s after the experiment was created" << std::endl;
}

class FallbackCloudFaultTest : public CloudFaultTest {
 protected:
  std::string ExtraMasterConfig() const override {
    return CloudPools("      spot: true\n      spot_fallback: on_demand\n");
  }
};

// Every way EC2 refuses or drags on the way up: no spot capacity (the pool falls back to
// on-demand), then throttling past the client's retries, server errors and a slow
// DescribeInstances. The launch goes through in the end.
TEST_F(FallbackCloudFaultTest, ThrottlingCapacityErrorsAndSlowCallsOnlyDelayTheScaleUp) {
  const std::vector<nlohmann::json> faults = {
      {{"action", "RequestSpotInstances"},
       {"code", "InsufficientInstanceCapacity"},
       {"status", 500},
       {"times", 1}},
      {{"action", "RunInstances"}, {"code", "RequestLimitExceeded"}, {"status", 503}, {"times", 4}},
      {{"action", "RunInstances"}, {"code", "InternalError"}, {"status", 500}, {"times", 2}},
      {{"action", "RunInstances"}, {"code", "Unavailable"}, {"status", 503}, {"times", 1}},
      {{"action", "DescribeInstances"}, {"delay_ms", 2000}, {"times", 3}}};
  for (const auto& fault : faults) ASSERT_TRUE(CloudAdmin("fault", fault).value("ok", false));
  StartAutoscaler();
  const auto fault = Clock::now();
  const int64_t id = CreateCloudExperiment();
  ASSERT_GT(id, 0);
  const double recovery = SecondsUntilFirstMetrics(id, fault);
  CheckNothingLost(id, kCloudShape);
  EXPECT_EQ(CallCount("RequestSpotInstances"), 1) << "spot is backed off after no capacity";
  EXPECT_GE(CallCount("RunInstances"), 8) << "every scripted refusal should have been met";
  EXPECT_LE(Instances().size(), 2u) << InstanceSummary();
  CheckNoInstanceLeft();
  const std::string decisions = Det("autoscaler decisions --resource-pool cloud --limit 50");
  EXPECT_NE(decisions.find("RequestLimitExceeded"), std::string::npos) << decisions;
  EXPECT_NE(decisions.find("InsufficientInstanceCapacity"), std::string::npos) << decisions;
  Report(
      "no spot capacity, then EC2 throttling (4×), 500 and 503 on RunInstances, slow "
      "DescribeInstances",
      "on-demand instead of spot; launches retry and back off; the trial starts once EC2 "
      "relents",
      recovery);
}

class SpotCloudFaultTest : public CloudFaultTest {
 protected:
  // EC2's two-minute warning (20 s here) for `victim`, then the wait until the trial runs on
  // another instance; `recovery`: seconds from the notice until it makes progress there (-1:
  // never).
  void NoticeAndWaitForTheReplacement(int64_t id, const std::string& victim, double* recovery) {
    const auto notice = Clock::now();
    ASSERT_TRUE(CloudAdmin("interrupt", {{"instance_id", victim}, {"notice_ms", 20000}})
                    .value("ok", false));
    std::string replacement;
    ASSERT_TRUE(Eventually(
        [&] {
          replacement = HostRunningTrial(id);
          return replacement.rfind("i-", 0) == 0 && replacement != victim;
        },
        90s))
        << "the trial never moved off " << victim << ": " << ReadLog("autoscaler.log");
    const double moved = std::chrono::duration<double>(Clock::now() - notice).count();
    const double progress = SecondsUntilProgress(MarkProgress(id), /*in_a_new_run=*/false);
    *recovery = progress < 0 ? -1 : moved + progress;
  }
  std::string ExtraMasterConfig() const override { return CloudPools("      spot: true\n"); }
  // Starts the autoscaler and the experiment and waits until its trial is 40 batches in on an
  // instance: the experiment's id and that instance.
  void StartTrialOnAnInstance(int64_t* id, std::string* instance,
                              const std::string& s3_bucket = "") {
    StartAutoscaler();
    *id = CreateCloudExperiment(s3_bucket);
    ASSERT_GT(*id, 0);
    auto trial =
        WaitForTrial(*id, [](const auto& t) { return t.value("steps_completed", 0) >= 40; });
    ASSERT_FALSE(trial.is_null()) << ReadLog("autoscaler.log");
    ASSERT_TRUE(Eventually(
        [&] {
          *instance = HostRunningTrial(*id);
          return instance->rfind("i-", 0) == 0;
        },
        30s))
        << "the trial runs on no instance: " << *instance << "\n"
        << ReadLog("master.log");
  }
};

// EC2 takes the spot instance back mid-trial: the autoscaler replaces it and the trial resumes
// from its checkpoint on the new one.
TEST_F(SpotCloudFaultTest, SpotInstanceTakenBackMidTrialIsReplacedAndTheTrialResumes) {
  int64_t id = 0;
  std::string victim;
  ASSERT_NO_FATAL_FAILURE(StartTrialOnAnInstance(&id, &victim));
  const ProgressMark fault = MarkProgress(id);
  ASSERT_TRUE(CloudAdmin("interrupt", {{"instance_id", victim}}).value("ok", false));
  const double recovery = SecondsUntilProgress(fault, /*in_a_new_run=*/true);
  CheckNothingLost(id, kCloudShape);
  EXPECT_EQ(Describe(id)["trials"][0].value("restarts", -1), 0)
      << "losing the machine is not the trial's failure";
  EXPECT_EQ(Instances().size(), 2u) << InstanceSummary();
  CheckNoInstanceLeft();
  Report("a spot instance taken back mid-trial (interruption)",
         "a new instance is launched; the trial resumes there from its checkpoint", recovery);
}

// EC2's two-minute warning (20 s here): the agent reads it from IMDS, the trial checkpoints and
// stops at once, and the instance's place is free, so the replacement is requested while the
// doomed one still runs; the trial goes on there from the checkpoint it made during the notice.
TEST_F(SpotCloudFaultTest, SpotInterruptionNoticeCheckpointsAndTheReplacementStartsDuringIt) {
  int64_t id = 0;
  std::string victim;
  ASSERT_NO_FATAL_FAILURE(StartTrialOnAnInstance(&id, &victim));
  double recovery = -1;
  ASSERT_NO_FATAL_FAILURE(NoticeAndWaitForTheReplacement(id, victim, &recovery));
  CheckNothingLost(id, kCloudShape);
  EXPECT_EQ(Describe(id)["trials"][0].value("restarts", -1), 0)
      << "losing the machine is not the trial's failure";
  EXPECT_EQ(CallCount("RequestSpotInstances"), 2) << InstanceSummary();
  CheckNoInstanceLeft();
  Report("a spot instance's interruption notice (EC2's warning, 20 s here)",
         "the trial checkpoints at once and goes on from there on a replacement requested during "
         "the notice",
         recovery);
}

// The notice again with checkpoints in S3, so that no folder is shared between the instances: the
// checkpoint made during the notice goes to the bucket, the replacement restores it from there,
// and the master's GC leaves the bucket holding exactly the checkpoints the policy keeps.
TEST_F(SpotCloudFaultTest, SpotInterruptionNoticeWithS3StorageResumesFromTheBucket) {
  ASSERT_NO_FATAL_FAILURE(StartS3("ckpt"));
  int64_t id = 0;
  std::string victim;
  ASSERT_NO_FATAL_FAILURE(StartTrialOnAnInstance(&id, &victim, "ckpt"));
  double recovery = -1;
  ASSERT_NO_FATAL_FAILURE(NoticeAndWaitForTheReplacement(id, victim, &recovery));
  CheckNothingLost(id, kCloudShape);
  EXPECT_EQ(Describe(id)["trials"][0].value("restarts", -1), 0);
  EXPECT_TRUE(fs::is_empty(dir_ / "checkpoints")) << "the shared folder was used";
  // GC: what the bucket holds is what the master keeps (save_trial_best 1, save_trial_latest 1).
  auto kept = [&] {
    return testing::CompletedCheckpoints(
        Det("--json experiment list-checkpoints " + std::to_string(id)));
  };
  auto in_bucket = [&] {
    std::set<std::string> uuids;
    for (const auto& object : S3Admin("objects?bucket=ckpt&prefix=multihost/")) {
      uuids.insert(object.value("key", "").substr(std::string("multihost/").size(), 36));
    }
    return uuids;
  };
  EXPECT_TRUE(Eventually([&] { return kept().size() <= 2 && in_bucket() == kept(); }, 60s))
      << in_bucket().size() << " checkpoints in the bucket, " << kept().size() << " kept";
  CheckNoInstanceLeft();
  Report("a spot instance's interruption notice, checkpoints in S3 (no shared folder)",
         "the trial checkpoints to the bucket and the replacement resumes from it", recovery);
}

// EC2's eventual consistency: a spot request missing from DescribeSpotInstanceRequests for 15 s
// and instances missing from DescribeInstances for 10 s after they were made. The trial runs on
// the first instance to its end: no duplicate request, nothing cancelled or terminated under it.
TEST_F(SpotCloudFaultTest, RequestsAndInstancesEc2ListsLateCostNothing) {
  ASSERT_TRUE(
      CloudAdmin("spot", {{"fulfil", true}, {"delay_ms", 0}, {"visibility_delay_ms", 15000}})
          .value("ok", false));
  ASSERT_TRUE(CloudAdmin("lag", {{"describe_instances_ms", 10000}}).value("ok", false));
  StartAutoscaler();
  const auto fault = Clock::now();
  const int64_t id = CreateCloudExperiment();
  ASSERT_GT(id, 0);
  const double recovery = SecondsUntilFirstMetrics(id, fault);
  CheckNothingLost(id, kCloudShape);
  EXPECT_EQ(CallCount("RequestSpotInstances"), 1) << InstanceSummary();
  EXPECT_EQ(Describe(id)["trials"][0].value("restarts", -1), 0);
  EXPECT_EQ(ReadLog("autoscaler.log").find("no longer needed"), std::string::npos)
      << ReadLog("autoscaler.log");
  CheckNoInstanceLeft();
  Report("EC2 lists a new spot request 15 s late and new instances 10 s late",
         "counted once, never cancelled or terminated under its work; the trial runs on its first "
         "instance",
         recovery);
}

}  // namespace
}  // namespace det::testing
