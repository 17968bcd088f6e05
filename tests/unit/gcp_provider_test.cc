// The gcp provider against the fake Compute Engine: the instance it inserts, what List() reports
// while inserts run and after, insert operations that fail or time out (launch outcomes), spot
// and preemptible VMs and their preemption, termination during an insert, the startup-script run
// for real, and the provider section's defaults and errors.
#include "cloud_gcp/gcp_provider.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/fakes/fake_gce.h"
#include "tests/testing/test_util.h"

namespace det::gcp {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using provider::InstanceState;
using provider::Offering;
using provider::ProviderErrorKind;

class GcpProviderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("det-gcp-provider-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    fake_.reset();
    fs::remove_all(dir_);
  }
  void StartFake(bool boot = false) {
    testing::FakeGceOptions options;
    options.boot_startup_script = boot;
    options.work_dir = dir_ / "instances";
    options.operation_delay = std::chrono::milliseconds(50);
    options.boot_delay = std::chrono::milliseconds(0);
    fake_ = std::make_unique<testing::FakeGce>(options);
    fake_->Start();
  }
  static GcpProviderConfig Config(const std::string& extra = "") {
    Result<GcpProviderConfig> config = ReadGcpProviderConfig(
        YAML::Load("type: gcp\nproject: det-fake-project\nzone: us-central1-a\n"
                   "boot_disk_source_image: projects/p/global/images/det-agent\n"
                   "instance_type: {machine_type: n1-standard-8, gpu_type: nvidia-tesla-v100, "
                   "gpu_num: 2}\nlabels: {team: vision}\nnetwork_tags: [det-agents]\n" +
                   extra),
        "Cluster-1");
    EXPECT_TRUE(config.ok()) << config.status().ToString();
    return *config;
  }
  // The provider reads `clock` (operation deadlines); tokens are signed at the real time.
  std::unique_ptr<GcpProvider> Provider(GcpProviderConfig config, AgentBootstrap bootstrap = {},
                                        const Clock* clock = nullptr) {
    auto key = ParseServiceAccountKey(fake_->ServiceAccountKey().dump());
    auto credentials = std::make_shared<GcpCredentials>(
        std::make_unique<ServiceAccountTokenSource>(*key, "test", clock_), clock_);
    auto client = std::make_unique<ComputeClient>(
        ComputeClientOptions{config.project, fake_->compute_endpoint()}, credentials, waits_);
    if (bootstrap.master_host.empty()) bootstrap = {"10.0.0.1", 8091, "", "", "", ""};
    return std::make_unique<GcpProvider>(std::move(config), bootstrap, std::move(client),
                                         clock != nullptr ? *clock : clock_);
  }
  json FakeInstance(const std::string& name) {
    const json state = fake_->State();  // outlives the loop
    for (const json& instance : state["instances"]) {
      if (instance["name"] == name) return instance;
    }
    return nullptr;
  }
  // Lists until `done` holds for the listing (operations finish in real time).
  std::vector<provider::Instance> ListUntil(
      GcpProvider& provider,
      const std::function<bool(const std::vector<provider::Instance>&)>& done) {
    std::vector<provider::Instance> listed;
    det::testing::Eventually(
        [&] {
          auto result = provider.List("gpu");
          if (result.ok()) listed = *result;
          return result.ok() && done(listed);
        },
        std::chrono::seconds(10));
    return listed;
  }
  static std::string ReadText(const fs::path& path) {
    std::ifstream in(path);
    return std::string((std::istreambuf_iterator<char>(in)), {});
  }

  RealClock clock_;
  SimulatedClock waits_{SimulatedClock::Sleeps::kSleepAdvances};  // the clients' waits, recorded
  fs::path dir_;
  std::unique_ptr<testing::FakeGce> fake_;
};

TEST_F(GcpProviderTest, InstancesAreInsertedLabelledListedAndDeleted) {
  StartFake();
  auto provider = Provider(Config());
  ASSERT_EQ(provider->Offerings().size(), 1u);
  provider::LaunchResult launched = provider->Launch({"gpu", 2, provider->Offerings()[0]});
  ASSERT_FALSE(launched.error) << launched.error->message;
  EXPECT_TRUE(launched.outcome_later);
  ASSERT_EQ(launched.launched.size(), 2u);
  const std::string name = launched.launched[0].id;
  EXPECT_TRUE(name.starts_with("det-agent-"));
  EXPECT_EQ(name.size(), std::string("det-agent-").size() + 8);
  const json resource = FakeInstance(name)["resource"];
  EXPECT_EQ(resource["machineType"], "zones/us-central1-a/machineTypes/n1-standard-8");
  EXPECT_EQ(resource["labels"]["managed-by"], LabelValue("Cluster-1"));
  EXPECT_EQ(resource["labels"]["determined-resource-pool"], "gpu");
  EXPECT_EQ(resource["labels"]["team"], "vision");
  EXPECT_EQ(resource["disks"][0]["initializeParams"]["sourceImage"],
            "projects/p/global/images/det-agent");
  EXPECT_EQ(resource["disks"][0]["initializeParams"]["diskSizeGb"], "200");
  EXPECT_EQ(resource["disks"][0]["initializeParams"]["diskType"],
            "zones/us-central1-a/diskTypes/pd-standard");
  EXPECT_EQ(resource["networkInterfaces"][0]["network"],
            "projects/det-fake-project/global/networks/default");
  EXPECT_EQ(resource["networkInterfaces"][0]["subnetwork"],
            "projects/det-fake-project/regions/us-central1/subnetworks/default");
  EXPECT_FALSE(resource["networkInterfaces"][0].contains("accessConfigs"));
  EXPECT_EQ(resource["tags"]["items"][0], "det-agents");
  EXPECT_EQ(resource["guestAccelerators"][0]["acceleratorType"],
            "zones/us-central1-a/acceleratorTypes/nvidia-tesla-v100");
  EXPECT_EQ(resource["guestAccelerators"][0]["acceleratorCount"], 2);
  EXPECT_EQ(resource["scheduling"]["onHostMaintenance"], "TERMINATE");
  EXPECT_EQ(resource["metadata"]["items"][0]["key"], "startup-script");
  // Starting while the inserts run, then the outcomes say they were created.
  auto listed = ListUntil(*provider, [](const auto& l) {
    return l.size() == 2 && l[0].state == InstanceState::kRunning &&
           l[1].state == InstanceState::kRunning;
  });
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0].offering, (Offering{"n1-standard-8", "us-central1-a", false}));
  const auto outcomes = provider->TakeLaunchOutcomes();
  ASSERT_EQ(outcomes.size(), 2u);
  EXPECT_FALSE(outcomes[0].error.has_value());
  EXPECT_TRUE(provider->TakeLaunchOutcomes().empty());
  // Another cluster's and another pool's instances are not this pool's.
  GcpProviderConfig other_cluster = Config();
  other_cluster.label_value = "another-cluster";
  Provider(other_cluster)->Launch({"gpu", 1, provider->Offerings()[0]});
  Provider(Config())->Launch({"cpu", 1, provider->Offerings()[0]});
  EXPECT_EQ(fake_->State()["instances"].size(), 4u);
  ASSERT_TRUE(provider->Terminate({name, "det-agent-gone"}).ok());
  listed = ListUntil(*provider, [](const auto& l) { return l.size() == 1; });
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_NE(listed[0].id, name);
}

TEST_F(GcpProviderTest, AnInsertWhoseOperationFailsIsAClassifiedLaunchOutcome) {
  StartFake();
  fake_->InjectOperationError("ZONE_RESOURCE_POOL_EXHAUSTED",
                              "The zone does not have enough resources", 1);
  auto provider = Provider(Config());
  provider::LaunchResult launched = provider->Launch({"gpu", 1, provider->Offerings()[0]});
  ASSERT_EQ(launched.launched.size(), 1u);
  std::vector<provider::LaunchOutcome> outcomes;
  det::testing::Eventually(
      [&] {
        EXPECT_TRUE(provider->List("gpu").ok());
        for (auto& outcome : provider->TakeLaunchOutcomes()) outcomes.push_back(outcome);
        return !outcomes.empty();
      },
      std::chrono::seconds(10));
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_EQ(outcomes[0].instance_id, launched.launched[0].id);
  ASSERT_TRUE(outcomes[0].error.has_value());
  EXPECT_EQ(outcomes[0].error->kind, ProviderErrorKind::kCapacity);
  EXPECT_NE(outcomes[0].error->message.find("ZONE_RESOURCE_POOL_EXHAUSTED"), std::string::npos);
  EXPECT_TRUE(provider->List("gpu")->empty()) << "it never existed";
}

TEST_F(GcpProviderTest, AnInsertRefusedAtOnceIsTheLaunchsError) {
  StartFake();
  fake_->InjectFault("instances.insert", 403, "QUOTA_EXCEEDED", 1);
  auto provider = Provider(Config());
  provider::LaunchResult launched = provider->Launch({"gpu", 3, provider->Offerings()[0]});
  EXPECT_TRUE(launched.launched.empty());
  ASSERT_TRUE(launched.error.has_value());
  EXPECT_EQ(launched.error->kind, ProviderErrorKind::kQuota);
  EXPECT_EQ(fake_->CallCount("instances.insert"), 1) << "the rest are not tried";
}

TEST_F(GcpProviderTest, AnInsertNotDoneWithinTheOperationTimeoutFailsAndIsDeletedWhenDone) {
  StartFake();
  fake_->HoldOperations(true);  // the insert is not done until the test says so
  SimulatedClock deadline_clock;
  auto provider = Provider(Config("operation_timeout_period: 1m\n"), {}, &deadline_clock);
  const std::string name = provider->Launch({"gpu", 1, provider->Offerings()[0]}).launched.at(0).id;
  ASSERT_EQ(provider->List("gpu")->size(), 1u);
  EXPECT_TRUE(provider->TakeLaunchOutcomes().empty()) << "running, within its minute";
  deadline_clock.Advance(std::chrono::seconds(61));
  auto listed = provider->List("gpu");
  ASSERT_TRUE(listed.ok());
  const auto outcomes = provider->TakeLaunchOutcomes();
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_EQ(outcomes[0].error->kind, ProviderErrorKind::kTransient);
  EXPECT_NE(outcomes[0].error->message.find("operation_timeout_period"), std::string::npos);
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].state, InstanceState::kStopping) << "no longer capacity for the pool";
  // The insert finishes after all: then the instance is deleted, and no second outcome comes.
  fake_->HoldOperations(false);
  EXPECT_TRUE(ListUntil(*provider, [](const auto& l) { return l.empty(); }).empty());
  EXPECT_TRUE(provider->TakeLaunchOutcomes().empty());
  EXPECT_GE(fake_->CallCount("instances.delete"), 1);
}

TEST_F(GcpProviderTest, AnInstanceTerminatedDuringItsInsertIsDeletedWhenTheInsertIsDone) {
  StartFake();
  fake_->HoldOperations(true);
  auto provider = Provider(Config());
  const std::string name = provider->Launch({"gpu", 1, provider->Offerings()[0]}).launched.at(0).id;
  ASSERT_TRUE(provider->Terminate({name}).ok());
  EXPECT_EQ(fake_->CallCount("instances.delete"), 0) << "Compute Engine would refuse it now";
  auto listed = provider->List("gpu");
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].state, InstanceState::kStopping);
  fake_->HoldOperations(false);
  EXPECT_TRUE(ListUntil(*provider, [](const auto& l) { return l.empty(); }).empty());
  EXPECT_GE(fake_->CallCount("instances.delete"), 1);
  EXPECT_TRUE(FakeInstance(name).is_null());
  const auto outcomes = provider->TakeLaunchOutcomes();
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_FALSE(outcomes[0].error.has_value()) << "the insert itself succeeded";
}

TEST_F(GcpProviderTest, ADeleteRefusedAsNotReadyIsAskedAgainAtTheNextList) {
  StartFake();
  fake_->HoldOperations(true);
  auto provider = Provider(Config());
  auto first = Provider(Config());  // an earlier autoscaler's insert, unknown to `provider`
  const std::string name = first->Launch({"gpu", 1, first->Offerings()[0]}).launched.at(0).id;
  ASSERT_TRUE(provider->Terminate({name}).ok()) << "not ready is no error: it is asked again";
  EXPECT_EQ(fake_->CallCount("instances.delete"), 1);
  fake_->HoldOperations(false);
  auto listed = ListUntil(*provider, [](const auto& l) { return l.empty(); });
  EXPECT_TRUE(listed.empty());
  EXPECT_GE(fake_->CallCount("instances.delete"), 2);
}

TEST_F(GcpProviderTest, SpotAndPreemptibleVmsAndTheirPreemption) {
  StartFake();
  auto spot = Provider(Config("spot: true\nspot_fallback: on_demand\n"));
  const auto offerings = spot->Offerings();
  ASSERT_EQ(offerings.size(), 2u);
  EXPECT_TRUE(offerings[0].spot);
  EXPECT_FALSE(offerings[1].spot);
  const std::string spot_vm = spot->Launch({"gpu", 1, offerings[0]}).launched.at(0).id;
  json scheduling = FakeInstance(spot_vm)["resource"]["scheduling"];
  EXPECT_EQ(scheduling["provisioningModel"], "SPOT");
  EXPECT_EQ(scheduling["instanceTerminationAction"], "DELETE");
  EXPECT_EQ(scheduling["automaticRestart"], false);
  const std::string standard = spot->Launch({"gpu", 1, offerings[1]}).launched.at(0).id;
  EXPECT_FALSE(FakeInstance(standard)["resource"]["scheduling"].contains("provisioningModel"));
  auto listed = ListUntil(*spot, [](const auto& l) { return l.size() == 2; });
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_TRUE(listed[0].id == spot_vm ? listed[0].offering.spot : listed[1].offering.spot);
  // Compute Engine takes the Spot VM back: deleted, so it drops out of the list.
  ASSERT_TRUE(fake_->Preempt(spot_vm));
  listed = ListUntil(*spot, [](const auto& l) { return l.size() == 1; });
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].id, standard);

  // A preemptible VM (Determined's instance_type.preemptible) stays, stopped: the decider
  // terminates stopped instances.
  GcpProviderConfig preemptible_config = Config();
  preemptible_config.preemptible = true;
  auto preemptible = Provider(preemptible_config);
  const std::string vm =
      preemptible->Launch({"other", 1, preemptible->Offerings()[0]}).launched.at(0).id;
  EXPECT_EQ(FakeInstance(vm)["resource"]["scheduling"]["preemptible"], true);
  ASSERT_TRUE(det::testing::Eventually([&] { return FakeInstance(vm)["status"] == "RUNNING"; },
                                       std::chrono::seconds(5)));
  ASSERT_TRUE(fake_->Preempt(vm));
  auto others = preemptible->List("other");
  ASSERT_TRUE(others.ok());
  ASSERT_EQ(others->size(), 1u);
  EXPECT_EQ((*others)[0].state, InstanceState::kStopped);
}

TEST_F(GcpProviderTest, TheStartupScriptStartsTheAgentWithTheInstanceNameAfterStartupScript) {
  StartFake(/*boot=*/true);
  const fs::path agent = dir_ / "fake-agent.sh";
  std::ofstream(agent) << "#!/bin/sh\necho \"$@\" > \"$DET_AGENT_DIR/agent-args\"\n";
  fs::permissions(agent, fs::perms::owner_all);
  GcpProviderConfig config = Config();
  config.agent_start.agent_binary = agent.string();
  config.agent_start.agent_args = {"--artificial-slots", "2"};
  auto provider =
      Provider(config, {"10.1.2.3", 9999, "", "echo ok > \"$DET_AGENT_DIR/startup-ran\"", "", ""});
  const std::string name = provider->Launch({"gpu", 1, provider->Offerings()[0]}).launched.at(0).id;
  const fs::path home = dir_ / "instances" / name;
  ASSERT_TRUE(det::testing::Eventually([&] { return fs::exists(home / "agent-args"); },
                                       std::chrono::seconds(20)))
      << ReadText(home / "boot.log") << ReadText(home / "bootstrap.log");
  EXPECT_EQ(ReadText(home / "agent-args"), "--config " + (home / "agent.yaml").string() +
                                               " --agent-id " + name + " --artificial-slots 2\n");
  EXPECT_TRUE(fs::exists(home / "startup-ran"));
  const std::string yaml = ReadText(home / "agent.yaml");
  EXPECT_NE(yaml.find("master_host: '10.1.2.3'"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("resource_pool: 'gpu'"), std::string::npos);
  // A Compute Engine metadata server has no hop limit: the instance's firewall keeps containers
  // on bridge networks from it.
  EXPECT_NE(ReadText(home / "iptables.log").find("-I DOCKER-USER -d 169.254.169.254/32 -j REJECT"),
            std::string::npos)
      << ReadText(home / "iptables.log");
}

TEST_F(GcpProviderTest, AFailingStartupScriptKeepsTheAgentFromStarting) {
  StartFake(/*boot=*/true);
  const fs::path agent = dir_ / "fake-agent.sh";
  std::ofstream(agent) << "#!/bin/sh\ntouch \"$DET_AGENT_DIR/agent-ran\"\n";
  fs::permissions(agent, fs::perms::owner_all);
  GcpProviderConfig config = Config();
  config.agent_start.agent_binary = agent.string();
  auto provider = Provider(config, {"10.1.2.3", 9999, "", "echo no driver; exit 3", "", ""});
  const std::string name = provider->Launch({"gpu", 1, provider->Offerings()[0]}).launched.at(0).id;
  const fs::path log = dir_ / "instances" / name / "bootstrap.log";
  ASSERT_TRUE(det::testing::Eventually(
      [&] { return ReadText(log).find("startup_script failed") != std::string::npos; },
      std::chrono::seconds(20)))
      << ReadText(log);
  EXPECT_FALSE(fs::exists(dir_ / "instances" / name / "agent-ran"));
}

TEST(GcpConfigTest, NetworksDiskTypesAndTheProvidersOwnLabel) {
  auto config = ReadGcpProviderConfig(
      YAML::Load("boot_disk_source_image: i\nproject: p\nzone: europe-west4-b\n"
                 "boot_disk_type: projects/p/zones/europe-west4-b/diskTypes/pd-ssd\n"),
      "c");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->boot_disk_type, "pd-ssd");
  EXPECT_EQ(config->Subnetwork(), "projects/p/regions/europe-west4/subnetworks/default");
  config = ReadGcpProviderConfig(
      YAML::Load("boot_disk_source_image: i\nnetwork_interface: {network: global/networks/det}\n"),
      "c");
  EXPECT_EQ(config->Subnetwork(), "") << "a custom network picks its own subnetwork";
  auto bad = ReadGcpProviderConfig(
      YAML::Load("boot_disk_source_image: i\nlabel_key: determined-resource-pool\n"
                 "network_tags: [Det_Agents]\n"),
      "c");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("provider.label_key: \"determined-resource-pool\" is the "
                                        "pool's own label"),
            std::string::npos)
      << bad.status().message();
  EXPECT_NE(bad.status().message().find("provider.network_tags: \"Det_Agents\""),
            std::string::npos);
}

TEST(GcpConfigTest, DeterminedsDefaultsAndErrorsThatNameTheField) {
  Result<GcpProviderConfig> config =
      ReadGcpProviderConfig(YAML::Load("type: gcp\nboot_disk_source_image: i\n"), "c9");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->boot_disk_size, 200);
  EXPECT_EQ(config->boot_disk_type, "pd-standard");
  EXPECT_EQ(config->label_key, "managed-by");
  EXPECT_EQ(config->label_value, "c9");
  EXPECT_EQ(config->machine_type, "n1-standard-32");
  EXPECT_EQ(config->gpu_type, "nvidia-tesla-t4");
  EXPECT_EQ(config->gpu_num, 4);
  EXPECT_FALSE(config->preemptible);
  EXPECT_FALSE(config->external_ip);
  EXPECT_EQ(config->operation_timeout_period, std::chrono::minutes(5));
  Result<GcpProviderConfig> account = ReadGcpProviderConfig(
      YAML::Load("boot_disk_source_image: i\nservice_account: {email: a@b}\n"), "c");
  EXPECT_EQ(account->service_account_scopes,
            std::vector<std::string>{"https://www.googleapis.com/auth/cloud-platform"});
  Result<GcpProviderConfig> bad = ReadGcpProviderConfig(
      YAML::Load("boot_disk_size: 10\nlabel_key: Bad\nname_prefix: 9x\nlabels: {Team: x}\n"
                 "instance_type: {machine_type: n1-standard-8, gpu_type: nvidia-tesla-v100, "
                 "gpu_num: 3}\nspot: true\noperation_timeout_period: 0s\n"
                 "network_interface: {external_ip: maybe}\nendpoint_url: ftp://x\n"),
      "c");
  ASSERT_FALSE(bad.ok());
  const std::string message = bad.status().message();
  for (const char* field :
       {"provider.boot_disk_source_image", "provider.boot_disk_size", "provider.label_key",
        "provider.name_prefix", "provider.labels", "provider.instance_type.gpu_num: 3",
        "provider.operation_timeout_period", "provider.network_interface.external_ip",
        "provider.endpoint_url"}) {
    EXPECT_NE(message.find(field), std::string::npos) << field << " in " << message;
  }
}

TEST(GcpConfigTest, MachineTypesAndTheirGpusAreChecked) {
  auto read = [](const std::string& instance_type) {
    return ReadGcpProviderConfig(
        YAML::Load("boot_disk_source_image: i\ninstance_type: " + instance_type), "c");
  };
  auto a2 = read("{machine_type: a2-highgpu-4g}");
  ASSERT_TRUE(a2.ok()) << a2.status().ToString();
  EXPECT_EQ(a2->gpu_type, "nvidia-tesla-a100");
  EXPECT_EQ(a2->gpu_num, 4);
  auto g2 = read("{machine_type: g2-standard-48}");
  EXPECT_EQ(g2->gpu_type, "nvidia-l4");
  EXPECT_EQ(g2->gpu_num, 4);
  auto cpu = read("{machine_type: e2-standard-8}");
  EXPECT_EQ(cpu->gpu_num, 0);
  EXPECT_EQ(read("{machine_type: a3-ultragpu-8g}")->gpu_type, "nvidia-h200-141gb");
  EXPECT_EQ(read("{machine_type: a4-highgpu-8g}")->gpu_num, 8);
  auto future = read("{machine_type: a5-futuregpu-8g, gpu_type: nvidia-x1, gpu_num: 8}");
  ASSERT_TRUE(future.ok()) << "a newer accelerator family, its GPUs said";
  EXPECT_EQ(future->gpu_num, 8);
  for (const char* type :
       {"n2-standard-8", "c3-highcpu-22", "c3-highcpu-192-metal", "e2-micro", "n1-highmem-96",
        "e2-custom-small-4096", "n2-custom-8-16384-ext", "z3-highmem-88-standardlssd"}) {
    EXPECT_TRUE(read(std::string("{machine_type: ") + type + "}").ok()) << type;
  }
  EXPECT_TRUE(read("{machine_type: custom-8-30720, gpu_type: nvidia-tesla-t4, gpu_num: 1}").ok());
  for (const auto& [type, error] :
       {std::pair{"{machine_type: N1_standard_8}", "is not a Compute Engine machine type"},
        {"{machine_type: a2-highgpu-99999999999g}", "gpu_num: is required"},
        {"{machine_type: a5-futuregpu-8g}", "gpu_num: is required for a5-futuregpu-8g"},
        {"{machine_type: a2-highgpu-4g, gpu_num: 2}", "comes with 4 nvidia-tesla-a100"},
        {"{machine_type: e2-standard-4, gpu_num: 1, gpu_type: nvidia-tesla-t4}",
         "GPUs attach only to N1"},
        {"{machine_type: n1-standard-4, gpu_type: nvidia-h100, gpu_num: 1}",
         "is not a GPU an N1 machine attaches"}}) {
    auto result = read(type);
    ASSERT_FALSE(result.ok()) << type;
    EXPECT_NE(result.status().message().find(error), std::string::npos)
        << result.status().message();
  }
}

TEST(GcpConfigTest, LabelValuesAreValidAndDistinct) {
  EXPECT_EQ(LabelValue("gpu-pool_1"), "gpu-pool_1");
  // Stable across builds: it is how a pool's instances are found again.
  EXPECT_EQ(LabelValue("GPU Pool"), "gpu-pool-4cdeeb25");  // FNV-1a of "GPU Pool"
  const std::string upper = LabelValue("GPU Pool");
  EXPECT_TRUE(upper.starts_with("gpu-pool-"));
  EXPECT_NE(upper, LabelValue("gpu pool"));
  EXPECT_LE(LabelValue(std::string(100, 'A')).size(), 63u);
  EXPECT_EQ(RegionOfZone("europe-west4-b"), "europe-west4");
}

}  // namespace
}  // namespace det::gcp
