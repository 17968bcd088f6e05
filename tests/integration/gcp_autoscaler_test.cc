// The autoscaler with the gcp provider end to end: the real det-master, det-autoscaler and the
// fake Compute Engine (fake-gce --boot), which runs each instance's startup-script, so every agent
// is a real det-agent that the bootstrap started with its instance's name. Credentials are the
// fake's service account key (GOOGLE_APPLICATION_CREDENTIALS): every call the autoscaler makes
// carries a token the fake issued against a verified JWT. Standard VMs, Spot VMs whose inserts
// fail with ZONE_RESOURCE_POOL_EXHAUSTED (fallback to standard), and a preempted Spot VM.
#include <gtest/gtest.h>

#include "tests/testing/autoscaler_fixture.h"
#include "tests/testing/fake_cloud_process.h"

namespace det {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;
using nlohmann::json;

class GcpAutoscalerTest : public testing::AutoscalerFixture {
 protected:
  void SetUp() override {
    fake_dir_ = fs::temp_directory_path() / ("det-gcp-e2e-" + std::to_string(getpid()));
    fs::create_directories(fake_dir_);
    fake_ = std::make_unique<testing::FakeGceProcess>(fake_dir_, /*boot=*/true);
    // The autoscaler's credentials: Application Default Credentials, from the environment.
    setenv("GOOGLE_APPLICATION_CREDENTIALS", fake_->key_file().c_str(), 1);
    setenv("GCE_METADATA_HOST", "127.0.0.1:1", 1);  // not on Compute Engine
    AutoscalerFixture::SetUp();
  }
  void TearDown() override {
    autoscaler_.reset();
    fake_.reset();  // kills the instances' agents
    AutoscalerFixture::TearDown();
    fs::remove_all(fake_dir_);
    unsetenv("GOOGLE_APPLICATION_CREDENTIALS");
    unsetenv("GCE_METADATA_HOST");
  }
  virtual std::string SpotKeys() const { return ""; }
  virtual int MaxInstances() const { return 2; }
  std::string ExtraConfig() const override {
    return "resource_pools:\n"
           "  - pool_name: default\n"
           "    agent_reconnect_wait: 2s\n"
           "    provider:\n"
           "      type: gcp\n"
           "      project: det-fake-project\n"
           "      zone: us-central1-a\n"
           "      endpoint_url: " +
           fake_->compute_endpoint() +
           "\n"
           "      boot_disk_source_image: projects/det-images/global/images/det-agent\n"
           "      instance_type: {machine_type: e2-standard-4}\n"
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
  json Instances() { return fake_->Admin("state")["instances"]; }
  int Calls(const std::string& method) {
    int count = 0;
    for (const auto& call : fake_->Admin("calls")) count += call["method"] == method ? 1 : 0;
    return count;
  }
  // The instance an agent of this cluster runs on now (null if none).
  json BootedInstance() {
    for (const auto& instance : Instances()) {
      if (instance["booted"] == true) return instance;
    }
    return nullptr;
  }
  json RunExperimentOnANewInstance(const std::string& config = "const.yaml") {
    const int64_t id = Create(Config(config));
    EXPECT_GT(id, 0);
    EXPECT_TRUE(testing::Eventually(
        [&] { return Det("agent list").find("det-agent-") != std::string::npos; }, 30s))
        << Log("autoscaler.log") << Instances().dump();
    const json instance = BootedInstance();
    EXPECT_EQ(WaitEnded(id), "COMPLETED") << Log("master.log") << Log("autoscaler.log");
    return instance;
  }
  void ExpectScaledBackToNothing() {
    EXPECT_TRUE(testing::Eventually([&] { return Instances().empty(); }, 30s))
        << Instances().dump() << Log("autoscaler.log");
    EXPECT_NE(Log("autoscaler.log").find("idle for more than max_idle_agent_period"),
              std::string::npos);
  }

  fs::path fake_dir_;
  std::unique_ptr<testing::FakeGceProcess> fake_;
};

TEST_F(GcpAutoscalerTest, StandardVmsBootAgentsThatRunTheWorkAndAreDeletedWhenIdle) {
  StartAutoscaler();
  ASSERT_TRUE(WaitForLog("autoscaler.log", "pool default: gcp provider")) << Log("autoscaler.log");
  EXPECT_NE(Log("autoscaler.log").find("credentials: service account"), std::string::npos);
  const json instance = RunExperimentOnANewInstance();
  ASSERT_TRUE(instance.is_object()) << Instances().dump();
  EXPECT_EQ(instance["provisioning_model"], "STANDARD");
  EXPECT_EQ(instance["labels"]["determined-resource-pool"], "default");
  EXPECT_FALSE(instance["labels"]["managed-by"].get<std::string>().empty());
  EXPECT_EQ(Calls("instances.insert"), 1);
  ExpectScaledBackToNothing();
  EXPECT_GE(Calls("instances.delete"), 1);
  const std::string name = instance["name"];
  EXPECT_NE(Det("autoscaler instances --all").find(name), std::string::npos);
  EXPECT_NE(Det("autoscaler instances --all").find("gcp"), std::string::npos);
}

class GcpSpotAutoscalerTest : public GcpAutoscalerTest {
 protected:
  std::string SpotKeys() const override {
    return "      spot: true\n"
           "      spot_fallback: on_demand\n";
  }
};

TEST_F(GcpSpotAutoscalerTest, ExhaustedSpotCapacityFallsBackToStandardVms) {
  fake_->Admin(
      "operation_error",
      {{"code", "ZONE_RESOURCE_POOL_EXHAUSTED"}, {"provisioning_model", "SPOT"}, {"times", 100}});
  StartAutoscaler();
  const json instance = RunExperimentOnANewInstance();
  ASSERT_TRUE(instance.is_object()) << Instances().dump();
  EXPECT_EQ(instance["provisioning_model"], "STANDARD");
  EXPECT_GE(Calls("instances.insert"), 2);
  EXPECT_NE(Log("autoscaler.log").find("ZONE_RESOURCE_POOL_EXHAUSTED"), std::string::npos);
  EXPECT_TRUE(testing::Eventually(
      [&] {
        return Det("autoscaler decisions").find("ZONE_RESOURCE_POOL_EXHAUSTED") !=
               std::string::npos;
      },
      10s))
      << Det("autoscaler decisions");
  ExpectScaledBackToNothing();
}

TEST_F(GcpSpotAutoscalerTest, APreemptedSpotVmIsReplacedAndTheTrialCompletes) {
  StartAutoscaler();
  ExpectTrialSurvivesLosingItsInstance([&] {
    const json first = BootedInstance();
    ASSERT_TRUE(first.is_object()) << Instances().dump();
    EXPECT_EQ(first["provisioning_model"], "SPOT");
    ASSERT_TRUE(fake_->Admin("preempt", {{"name", first["name"]}})["ok"].get<bool>());
  });
  EXPECT_EQ(Calls("instances.insert"), 2) << "one replacement for the preempted VM";
  ExpectScaledBackToNothing();
}

// Issue 27 on Compute Engine: a Spot VM's preemption (instance/preempted TRUE, the VM STOPPING
// for the notice) has the trial checkpoint at once; the VM's place is free, so the replacement is
// inserted while it stops.
class GcpSpotOneInstanceTest : public GcpSpotAutoscalerTest {
 protected:
  void SetUp() override {
    setenv("DET_INTERRUPTION_POLL_INTERVAL", "1s", 1);  // the agents', through the boot
    GcpSpotAutoscalerTest::SetUp();
  }
  void TearDown() override {
    GcpSpotAutoscalerTest::TearDown();
    unsetenv("DET_INTERRUPTION_POLL_INTERVAL");
  }
  int MaxInstances() const override { return 1; }
};

TEST_F(GcpSpotOneInstanceTest, APreemptionCheckpointsTheTrialAndItsReplacementStartsAtOnce) {
  StartAutoscaler();
  std::string doomed;
  ExpectTrialCheckpointsDuringTheNotice(
      [&] {
        const json first = BootedInstance();
        ASSERT_TRUE(first.is_object()) << Instances().dump();
        doomed = first["name"];
        ASSERT_TRUE(
            fake_->Admin("preempt", {{"name", doomed}, {"notice_ms", 15000}})["ok"].get<bool>());
      },
      [&] { return Calls("instances.insert"); },
      [&] {
        for (const auto& instance : Instances()) {
          if (instance["name"] == doomed) return instance["status"] == "STOPPING";
        }
        return false;
      },
      "Compute Engine preempted the VM");
}

}  // namespace
}  // namespace det
