// The autoscaler with the aws provider end to end: the real det-master, det-autoscaler and the
// fake EC2 (fake-ec2 --boot), which runs each launched instance's user data, so every agent is a
// real det-agent that the bootstrap started with its EC2 instance id. On-demand and spot, through
// capacity errors, spot→on-demand fallback, throttling and a missing IAM permission.
#include <gtest/gtest.h>

#include <fstream>

#include "tests/testing/autoscaler_fixture.h"
#include "tests/testing/fake_cloud_process.h"

namespace det {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

class AwsAutoscalerTest : public testing::AutoscalerFixture {
 protected:
  void SetUp() override {
    // The autoscaler's credentials: the AWS CLI's chain, from the environment it inherits.
    setenv("AWS_ACCESS_KEY_ID", "AKIDFAKE", 1);
    setenv("AWS_SECRET_ACCESS_KEY", "fake-secret", 1);
    setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
    fake_dir_ = fs::temp_directory_path() / ("det-aws-e2e-" + std::to_string(getpid()));
    fs::create_directories(fake_dir_);
    fake_ = std::make_unique<testing::FakeEc2Process>(fake_dir_, /*boot=*/true);
    AutoscalerFixture::SetUp();
  }
  void TearDown() override {
    autoscaler_.reset();
    fake_.reset();  // kills the instances' agents
    AutoscalerFixture::TearDown();
    fs::remove_all(fake_dir_);
    for (const char* name :
         {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_EC2_METADATA_DISABLED"}) {
      unsetenv(name);
    }
  }
  virtual std::string SpotKeys() const { return ""; }
  virtual int MaxInstances() const { return 2; }
  std::string ExtraConfig() const override {
    return "resource_pools:\n"
           "  - pool_name: default\n"
           "    agent_reconnect_wait: 2s\n"
           "    provider:\n"
           "      type: aws\n"
           "      region: us-west-2\n"
           "      endpoint_url: " +
           fake_->endpoint() +
           "\n"
           "      image_id: ami-det-agent\n"
           "      ssh_key_name: det\n"
           "      instance_type: t3.large\n"
           "      instance_slots: 1\n"
           "      max_instances: " +
           std::to_string(MaxInstances()) +
           "\n"
           "      max_idle_agent_period: 2s\n"
           "      master_host: 127.0.0.1\n"
           "      agent_binary: " +
           testing::BuildDir() +
           "/agent/det-agent\n"
           "      agent_args: [--artificial-slots, '1', --plaintext]\n" +
           SpotKeys();
  }
  nlohmann::json Instances() { return fake_->Admin("state")["instances"]; }
  // Every instance's agent log, for failure messages.
  std::string AgentLogs() const {
    std::string all;
    const fs::path root = fake_dir_ / "ec2-instances";
    if (!fs::exists(root)) return all;
    for (const auto& instance : fs::directory_iterator(root)) {
      std::ifstream in(instance.path() / "agent.log");
      all += "--- " + instance.path().filename().string() + " agent.log\n" +
             std::string(std::istreambuf_iterator<char>(in), {});
    }
    return all;
  }
  int Calls(const std::string& action) {
    int count = 0;
    for (const auto& call : fake_->Admin("calls")) count += call["action"] == action ? 1 : 0;
    return count;
  }
  // Runs the example to completion and returns the EC2 instance its agent ran on.
  nlohmann::json RunExperimentOnANewInstance() {
    const int64_t id = Create(Config("const.yaml"));
    EXPECT_GT(id, 0);
    EXPECT_TRUE(testing::Eventually(
        [&] { return Det("agent list").find("i-0") != std::string::npos; }, 30s))
        << Log("autoscaler.log") << Instances().dump();
    EXPECT_EQ(WaitEnded(id), "COMPLETED") << Log("master.log") << Log("autoscaler.log");
    for (const auto& instance : Instances()) {
      if (instance["booted"] == true) return instance;
    }
    return nullptr;
  }
  void ExpectScaledBackToNothing() {
    EXPECT_TRUE(testing::Eventually(
        [&] {
          for (const auto& instance : Instances()) {
            if (instance["state"] != "terminated") return false;
          }
          return true;
        },
        30s))
        << Instances().dump() << Log("autoscaler.log");
    EXPECT_TRUE(WaitForLog("autoscaler.log", "idle for more than max_idle_agent_period"))
        << Log("autoscaler.log");
  }

  fs::path fake_dir_;
  std::unique_ptr<testing::FakeEc2Process> fake_;
};

TEST_F(AwsAutoscalerTest, OnDemandInstancesBootAgentsThatRunTheWorkAndAreTerminatedWhenIdle) {
  StartAutoscaler();
  ASSERT_TRUE(WaitForLog("autoscaler.log", "pool default: aws provider")) << Log("autoscaler.log");
  const nlohmann::json instance = RunExperimentOnANewInstance();
  ASSERT_TRUE(instance.is_object()) << Instances().dump();
  EXPECT_EQ(instance["spot"], false);
  EXPECT_EQ(instance["tags"]["managed-by"].get<std::string>().empty(), false);
  EXPECT_EQ(instance["tags"]["determined-resource-pool"], "default");
  EXPECT_EQ(instance["launch_params"]["MetadataOptions.HttpTokens"], "required");
  EXPECT_EQ(Calls("RunInstances"), 1);
  ExpectScaledBackToNothing();
  // What the master recorded about it.
  EXPECT_NE(Det("autoscaler instances --all").find(instance["id"].get<std::string>()),
            std::string::npos);
  EXPECT_NE(Det("autoscaler instances --all").find("aws"), std::string::npos);
}

class AwsSpotAutoscalerTest : public AwsAutoscalerTest {
 protected:
  std::string SpotKeys() const override {
    return "      spot: true\n"
           "      spot_max_price: '0.80'\n"
           "      spot_fallback: on_demand\n";
  }
};

TEST_F(AwsSpotAutoscalerTest, SpotRequestsAreFulfilledTaggedAndServe) {
  StartAutoscaler();
  const nlohmann::json instance = RunExperimentOnANewInstance();
  ASSERT_TRUE(instance.is_object()) << Instances().dump();
  EXPECT_EQ(instance["spot"], true);
  EXPECT_EQ(instance["tags"]["determined-resource-pool"], "default");  // by CreateTags
  EXPECT_EQ(Calls("RequestSpotInstances"), 1);
  EXPECT_EQ(Calls("RunInstances"), 0);
  ExpectScaledBackToNothing();
}

TEST_F(AwsSpotAutoscalerTest, NoSpotCapacityFallsBackToOnDemandThroughThrottling) {
  fake_->Admin("fault", {{"action", "RequestSpotInstances"},
                         {"code", "InsufficientInstanceCapacity"},
                         {"status", 500},
                         {"times", 100}});
  // Throttled past the client's three attempts: the launch gate pauses the pool, then retries.
  fake_->Admin("fault", {{"action", "RunInstances"},
                         {"code", "RequestLimitExceeded"},
                         {"status", 503},
                         {"times", 3}});
  StartAutoscaler();
  const nlohmann::json instance = RunExperimentOnANewInstance();
  ASSERT_TRUE(instance.is_object()) << Instances().dump();
  EXPECT_EQ(instance["spot"], false);
  EXPECT_GE(Calls("RequestSpotInstances"), 1);
  EXPECT_EQ(Calls("RunInstances"), 4);
  EXPECT_NE(Log("autoscaler.log").find("InsufficientInstanceCapacity"), std::string::npos);
  EXPECT_NE(Log("autoscaler.log")
                .find("throttled error: ec2:RunInstances failed: "
                      "RequestLimitExceeded"),
            std::string::npos)
      << Log("autoscaler.log");
  ExpectScaledBackToNothing();
}

TEST_F(AwsSpotAutoscalerTest, SpotRequestsLeftOpenForLackOfCapacityFallBackToOnDemand) {
  // EC2 accepts the request but leaves it open (capacity-not-available), as it does when a
  // zone has no spot capacity: the request is given up and on-demand launched meanwhile.
  fake_->Admin("spot", {{"fulfil", false}});
  StartAutoscaler();
  const nlohmann::json instance = RunExperimentOnANewInstance();
  ASSERT_TRUE(instance.is_object()) << Instances().dump();
  EXPECT_EQ(instance["spot"], false);
  EXPECT_EQ(Calls("RequestSpotInstances"), 1);
  EXPECT_GE(Calls("CancelSpotInstanceRequests"), 1);
  EXPECT_EQ(Calls("RunInstances"), 1);
  EXPECT_NE(Det("autoscaler decisions").find("capacity-not-available"), std::string::npos)
      << Det("autoscaler decisions");
  ExpectScaledBackToNothing();
}

TEST_F(AwsSpotAutoscalerTest, AnInterruptedSpotInstanceIsReplacedAndTheTrialCompletes) {
  StartAutoscaler();
  ExpectTrialSurvivesLosingItsInstance([&] {
    nlohmann::json first;
    for (const auto& instance : Instances()) {
      if (instance["booted"] == true) first = instance;
    }
    ASSERT_TRUE(first.is_object()) << Instances().dump();
    EXPECT_EQ(first["spot"], true);
    ASSERT_TRUE(fake_->Admin("interrupt", {{"instance_id", first["id"]}}).is_object());
  });
  EXPECT_EQ(Calls("RequestSpotInstances"), 2) << "one replacement for the interrupted instance";
  ExpectScaledBackToNothing();
}

// EC2's documented eventual consistency: a new spot request is missing from
// DescribeSpotInstanceRequests (and NotFound by id) for seconds after RequestSpotInstances returned
// it, while its instance may already run work. The command runs to its end on that instance: no
// request is cancelled under it, no instance terminated, no second request made.
TEST_F(AwsSpotAutoscalerTest, ARequestEc2DoesNotListYetNeverCostsTheWorkItsInstanceRuns) {
  fake_->Admin("spot", {{"fulfil", true}, {"delay_ms", 0}, {"visibility_delay_ms", 15000}});
  StartAutoscaler();
  const std::string out = Det("--json cmd run 'sleep 8; echo finished'");
  const auto reply = nlohmann::json::parse(out, nullptr, false);
  ASSERT_TRUE(reply.is_object()) << out;
  const std::string task = reply.value("task_id", "");
  EXPECT_TRUE(testing::Eventually(
      [&] { return Det("task logs " + task).find("finished") != std::string::npos; }, 60s))
      << Log("autoscaler.log") << Log("master.log");
  const auto summary = nlohmann::json::parse(Det("--json task wait " + task), nullptr, false);
  EXPECT_EQ(summary.value("exit_code", -1), 0) << summary.dump() << Log("autoscaler.log");
  EXPECT_EQ(summary.value("failure_type", "?"), "") << summary.dump();
  EXPECT_EQ(Calls("RequestSpotInstances"), 1) << Log("autoscaler.log");
  EXPECT_EQ(Log("autoscaler.log").find("no longer needed"), std::string::npos)
      << Log("autoscaler.log");
  int terminated = 0;
  for (const auto& instance : Instances()) terminated += instance["state"] != "running";
  EXPECT_EQ(terminated, 0) << "nothing ended while the command ran: " << Instances().dump();
  ExpectScaledBackToNothing();
}

// Issue 27: EC2's two-minute warning, with max_instances 1. The agent reads the notice from IMDS,
// the master has the trial checkpoint and stop at once (the example saves only at the end of
// training otherwise), and the notice frees the instance's place, so the replacement is
// requested while the doomed instance still runs; the trial resumes from the checkpoint it made
// during the notice.
class AwsSpotOneInstanceTest : public AwsSpotAutoscalerTest {
 protected:
  void SetUp() override {
    setenv("DET_INTERRUPTION_POLL_INTERVAL", "1s", 1);  // the agents', through the boot
    AwsSpotAutoscalerTest::SetUp();
  }
  void TearDown() override {
    AwsSpotAutoscalerTest::TearDown();
    unsetenv("DET_INTERRUPTION_POLL_INTERVAL");
  }
  int MaxInstances() const override { return 1; }
};

TEST_F(AwsSpotOneInstanceTest,
       AnInterruptionNoticeCheckpointsTheTrialAndItsReplacementStartsAtOnce) {
  StartAutoscaler();
  std::string doomed;
  ExpectTrialCheckpointsDuringTheNotice(
      [&] {
        for (const auto& instance : Instances()) {
          if (instance["booted"] == true) doomed = instance["id"];
        }
        ASSERT_FALSE(doomed.empty()) << Instances().dump();
        ASSERT_TRUE(
            fake_->Admin("interrupt", {{"instance_id", doomed}, {"notice_ms", 15000}})["ok"]);
      },
      [&] { return Calls("RequestSpotInstances"); },
      [&] {
        for (const auto& instance : Instances()) {
          if (instance["id"] == doomed) return instance["state"] == "running";
        }
        return false;
      },
      "EC2 spot interruption: terminate at ");
}

// A command asked to come back (--max-restarts) runs again on the replacement when its spot
// instance is taken back without notice.
TEST_F(AwsSpotOneInstanceTest, ACommandWithMaxRestartsComesBackOnTheReplacement) {
  StartAutoscaler();
  const std::string out = Det("--json cmd run --max-restarts 1 'sleep 4; echo finished'");
  const auto reply = nlohmann::json::parse(out, nullptr, false);
  ASSERT_TRUE(reply.is_object()) << out;
  const std::string task = reply.value("task_id", "");
  ASSERT_TRUE(testing::Eventually(
      [&] { return Det("task list").find("RUNNING") != std::string::npos; }, 30s))
      << Log("autoscaler.log");
  std::string first;
  for (const auto& instance : Instances()) {
    if (instance["booted"] == true) first = instance["id"];
  }
  ASSERT_TRUE(fake_->Admin("interrupt", {{"instance_id", first}})["ok"]);
  const auto summary = nlohmann::json::parse(Det("--json task wait " + task), nullptr, false);
  EXPECT_EQ(summary.value("exit_code", -1), 0) << summary.dump() << Log("master.log");
  EXPECT_EQ(summary.value("failure_type", "?"), "") << summary.dump();
  EXPECT_EQ(summary.value("restarts", 0), 1) << summary.dump();
  EXPECT_EQ(summary.value("allocations", 0), 2) << summary.dump();
  EXPECT_NE(Det("task logs " + task).find("finished"), std::string::npos);
}

// A wrong secret key: EC2 refuses every DescribeInstances. The pool can do nothing, and says so
// where the README sends operators, once, naming the call.
TEST_F(AwsAutoscalerTest, AProviderThatCannotListIsTheLatestDecisionNamingTheCall) {
  fake_->Admin(
      "fault",
      {{"action", "DescribeInstances"}, {"code", "AuthFailure"}, {"status", 401}, {"times", 1000}});
  StartAutoscaler();
  EXPECT_TRUE(testing::Eventually(
      [&] { return Det("autoscaler decisions").find("AuthFailure") != std::string::npos; }, 20s))
      << Det("autoscaler decisions") << Log("autoscaler.log");
  const std::string decisions = Det("autoscaler decisions");
  EXPECT_NE(decisions.find("ec2:DescribeInstances"), std::string::npos) << decisions;
  std::this_thread::sleep_for(6s);  // another list, refused the same way
  const auto all = nlohmann::json::parse(Det("--json autoscaler decisions"), nullptr, false);
  ASSERT_TRUE(all.is_array()) << all;
  EXPECT_EQ(all.size(), 1u) << "once per change, not per retry: " << all.dump();
}

TEST_F(AwsAutoscalerTest, AMissingIamPermissionIsReportedByName) {
  fake_->Admin("fault", {{"action", "RunInstances"},
                         {"code", "UnauthorizedOperation"},
                         {"status", 403},
                         {"times", 100}});
  StartAutoscaler();
  ASSERT_GT(Create(Config("const.yaml")), 0);
  EXPECT_TRUE(WaitForLog("autoscaler.log", "ec2:RunInstances")) << Log("autoscaler.log");
  EXPECT_NE(Log("autoscaler.log").find("must allow ec2:RunInstances"), std::string::npos)
      << Log("autoscaler.log");
  EXPECT_TRUE(Instances().empty());
  // ... and by `det autoscaler decisions`, from what the master stored.
  EXPECT_TRUE(testing::Eventually(
      [&] {
        return Det("autoscaler decisions").find("UnauthorizedOperation") != std::string::npos;
      },
      10s))
      << Det("autoscaler decisions");
}

}  // namespace
}  // namespace det
