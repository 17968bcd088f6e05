// The aws provider against the fake EC2: on-demand and spot launches, what List() reports (spot
// requests before AWS shows them, fulfilled requests tagged, interrupted instances gone), spot
// cancellation races, offerings with fallback, and the bootstrap user data run for real.
#include "cloud_aws/aws_provider.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/fakes/fake_ec2.h"
#include "tests/testing/test_util.h"

namespace det::aws {
namespace {

namespace fs = std::filesystem;
using provider::InstanceState;
using provider::LaunchRequest;
using provider::Offering;

class AwsProviderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("det-aws-provider-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    fake_.reset();
    fs::remove_all(dir_);
  }
  void StartFake(bool boot = false) {
    testing::FakeEc2Options options;
    options.boot_user_data = boot;
    options.work_dir = dir_ / "instances";
    options.boot_delay = std::chrono::milliseconds(0);
    options.clock = &ec2_time_;
    fake_ = std::make_unique<testing::FakeEc2>(options);
    fake_->Start();
  }
  AwsProviderConfig Config() {
    YAML::Node node = YAML::Load(
        "type: aws\nimage_id: ami-1\nssh_key_name: key\ninstance_type: g4dn.xlarge\n"
        "custom_tags: [{key: team, value: vision}]\n");
    Result<AwsProviderConfig> config = ReadAwsProviderConfig(node, "cluster-1");
    EXPECT_TRUE(config.ok()) << config.status().ToString();
    return *config;
  }
  std::unique_ptr<AwsProvider> Provider(AwsProviderConfig config, AgentBootstrap bootstrap = {}) {
    auto env = AwsEnvironment::Of(
        {{"AWS_ACCESS_KEY_ID", "AKIDFAKE"}, {"AWS_SECRET_ACCESS_KEY", "fake-secret"}});
    auto client = std::make_unique<Ec2Client>(
        Ec2ClientOptions{"us-west-2", fake_->endpoint(), {}, std::chrono::seconds(5)},
        std::make_shared<CredentialsChain>(env, nullptr, clock_), waits_);
    if (bootstrap.master_host.empty()) bootstrap = {"10.0.0.1", 8091, "", "", "", ""};
    return std::make_unique<AwsProvider>(std::move(config), bootstrap, std::move(client), clock_);
  }
  static std::string ReadText(const fs::path& path) {
    std::ifstream in(path);
    return std::string((std::istreambuf_iterator<char>(in)), {});
  }

  RealClock clock_;
  SimulatedClock ec2_time_;  // the fake EC2's: the tests move it
  SimulatedClock waits_{SimulatedClock::Sleeps::kSleepAdvances};  // the clients' waits, recorded
  fs::path dir_;
  std::unique_ptr<testing::FakeEc2> fake_;
};

TEST_F(AwsProviderTest, OnDemandInstancesAreLaunchedTaggedListedAndTerminated) {
  StartFake();
  auto provider = Provider(Config());
  const Offering offering = provider->Offerings().at(0);
  EXPECT_FALSE(offering.spot);
  EXPECT_EQ(offering.instance_type, "g4dn.xlarge");
  provider::LaunchResult launched = provider->Launch({"gpu", 2, offering});
  ASSERT_FALSE(launched.error) << launched.error->message;
  ASSERT_EQ(launched.launched.size(), 2u);
  EXPECT_EQ(launched.launched[0].state, InstanceState::kStarting);
  const nlohmann::json tags = fake_->State()["instances"][0]["tags"];
  EXPECT_EQ(tags["managed-by"], "cluster-1");
  EXPECT_EQ(tags[kPoolTag], "gpu");
  EXPECT_EQ(tags["Name"], "determined-ai-agent");
  EXPECT_EQ(tags["team"], "vision");

  // Another pool's and another installation's instances are not this pool's.
  ASSERT_FALSE(provider->Launch({"cpu", 1, offering}).error);
  AwsProviderConfig stranger = Config();
  stranger.tag_value = "someone-else";
  ASSERT_FALSE(Provider(stranger)->Launch({"gpu", 1, offering}).error);

  Result<std::vector<provider::Instance>> listed = provider->List("gpu");
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ((*listed)[0].state, InstanceState::kRunning);
  EXPECT_EQ((*listed)[0].offering.zone, "us-west-2a");
  ASSERT_TRUE(provider->Terminate({(*listed)[0].id, (*listed)[1].id}).ok());
  EXPECT_TRUE(provider->List("gpu")->empty());
  // Already gone is not an error, even mixed with one that is not.
  auto cpu = provider->List("cpu");
  ASSERT_EQ(cpu->size(), 1u);
  EXPECT_TRUE(provider->Terminate({(*listed)[0].id, (*cpu)[0].id, "i-0000000000000dead"}).ok());
  EXPECT_TRUE(provider->List("cpu")->empty());
}

TEST_F(AwsProviderTest, SpotRequestsAreCapacityOnTheWayAndFulfilledInstancesGetThePoolsTags) {
  StartFake();
  fake_->SetSpotBehaviour(false, {}, {});
  AwsProviderConfig config = Config();
  config.spot = true;
  config.spot_max_price = "1.20";
  auto provider = Provider(config);
  const Offering spot = provider->Offerings().at(0);
  ASSERT_TRUE(spot.spot);
  provider::LaunchResult launched = provider->Launch({"gpu", 1, spot});
  ASSERT_FALSE(launched.error) << launched.error->message;
  ASSERT_EQ(launched.launched.at(0).state, InstanceState::kSpotRequested);
  auto open = provider->List("gpu");
  ASSERT_EQ(open->size(), 1u);
  EXPECT_EQ((*open)[0].state, InstanceState::kSpotRequested);
  EXPECT_TRUE((*open)[0].id.starts_with("sir-"));

  fake_->SetSpotBehaviour(true, {}, {});
  auto fulfilled = provider->List("gpu");
  ASSERT_TRUE(fulfilled.ok());
  ASSERT_EQ(fulfilled->size(), 1u);
  EXPECT_TRUE((*fulfilled)[0].id.starts_with("i-"));
  EXPECT_TRUE((*fulfilled)[0].offering.spot);
  const nlohmann::json instance = fake_->State()["instances"][0];
  EXPECT_EQ(instance["tags"][kPoolTag], "gpu");  // tagged by List, found by tag from now on
  auto again = provider->List("gpu");
  ASSERT_EQ(again->size(), 1u);
  EXPECT_EQ(fake_->CallCount("CreateTags"), 1);

  // EC2 takes it back: the instance drops out, which the pool sees as lost capacity.
  ASSERT_TRUE(fake_->InterruptSpot((*again)[0].id));
  EXPECT_TRUE(provider->List("gpu")->empty());
}

// A spot request cannot ask for the metadata options RunInstances sets; List() closes the
// instance's metadata service to containers once it sees it, and asks only once, even when EC2
// refuses (a role without ec2:ModifyInstanceMetadataOptions: logged, not retried every pass).
TEST_F(AwsProviderTest, ASpotInstancesMetadataServiceIsClosedToContainersOnce) {
  StartFake();
  fake_->SetSpotBehaviour(true, {}, {});
  AwsProviderConfig config = Config();
  config.spot = true;
  auto provider = Provider(config);
  ASSERT_FALSE(provider->Launch({"gpu", 2, provider->Offerings().at(0)}).error);
  fake_->InjectFault("ModifyInstanceMetadataOptions", "UnauthorizedOperation", 403, 1);
  ASSERT_EQ(provider->List("gpu")->size(), 2u);
  for (int i = 0; i < 3; ++i) ASSERT_EQ(provider->List("gpu")->size(), 2u);
  EXPECT_EQ(fake_->CallCount("ModifyInstanceMetadataOptions"), 2);
  int closed = 0;
  const nlohmann::json state = fake_->State();
  for (const nlohmann::json& instance : state["instances"]) {
    closed += instance["metadata_options"]["http_tokens"] == "required" &&
              instance["metadata_options"]["hop_limit"] == "1";
  }
  EXPECT_EQ(closed, 1);  // the other was refused, and stays as EC2 started it

  // On-demand instances are launched closed: nothing to change.
  StartFake();
  auto on_demand = Provider(Config());
  ASSERT_FALSE(on_demand->Launch({"gpu", 1, on_demand->Offerings().at(0)}).error);
  ASSERT_EQ(on_demand->List("gpu")->size(), 1u);
  EXPECT_EQ(fake_->CallCount("ModifyInstanceMetadataOptions"), 0);
}

// EC2's two-minute warning: the request is marked-for-termination while the instance still runs.
// List() reports it stopping (its place free for a replacement), then, once EC2 has reclaimed it,
// not at all.
TEST_F(AwsProviderTest, AnInstanceMarkedForInterruptionIsReportedStoppingThenGone) {
  StartFake();
  AwsProviderConfig config = Config();
  config.spot = true;
  auto provider = Provider(config);
  ASSERT_FALSE(provider->Launch({"gpu", 1, provider->Offerings().at(0)}).error);
  auto fulfilled = provider->List("gpu");
  ASSERT_EQ(fulfilled->size(), 1u);
  ASSERT_NE((*fulfilled)[0].state, InstanceState::kStopping);
  ASSERT_TRUE(fake_->InterruptSpot((*fulfilled)[0].id, std::chrono::milliseconds(300)));
  auto marked = provider->List("gpu");
  ASSERT_EQ(marked->size(), 1u);
  EXPECT_EQ((*marked)[0].state, InstanceState::kStopping);
  ec2_time_.Advance(std::chrono::milliseconds(400));  // past the two-minute warning
  EXPECT_TRUE(provider->List("gpu")->empty());
}

// A request fulfilled before DescribeInstances shows its instance: the request stands for the
// instance (capacity on the way) until the instance is listed, then the instance is adopted.
TEST_F(AwsProviderTest, AFulfilledRequestsInstanceEc2DoesNotListYetIsStillOnTheWay) {
  StartFake();
  fake_->SetInstanceVisibilityDelay(std::chrono::milliseconds(500));
  AwsProviderConfig config = Config();
  config.spot = true;
  auto provider = Provider(config);
  ASSERT_FALSE(provider->Launch({"gpu", 1, provider->Offerings().at(0)}).error);
  auto early = provider->List("gpu");
  ASSERT_TRUE(early.ok()) << early.status().ToString();
  ASSERT_EQ(early->size(), 1u);
  EXPECT_EQ((*early)[0].state, InstanceState::kSpotRequested);
  EXPECT_TRUE((*early)[0].id.starts_with("sir-"));
  ec2_time_.Advance(std::chrono::milliseconds(600));
  auto later = provider->List("gpu");
  ASSERT_EQ(later->size(), 1u);
  EXPECT_TRUE((*later)[0].id.starts_with("i-")) << "adopted once listed, not given up";
  EXPECT_EQ((*later)[0].replaces, (*early)[0].id);
}

TEST_F(AwsProviderTest, WithFallbackARequestShortOfCapacityIsGivenUpAsAFailedLaunch) {
  StartFake();
  fake_->SetSpotBehaviour(false, {}, {});  // open: capacity-not-available
  AwsProviderConfig config = Config();
  config.spot = true;
  config.spot_fallback = "on_demand";
  auto provider = Provider(config);
  const std::string id = provider->Launch({"gpu", 1, provider->Offerings()[0]}).launched.at(0).id;
  auto listed = provider->List("gpu");
  ASSERT_TRUE(listed.ok());
  EXPECT_TRUE(listed->empty()) << "no longer capacity on the way";
  const auto outcomes = provider->TakeLaunchOutcomes();
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_EQ(outcomes[0].instance_id, id);
  EXPECT_EQ(outcomes[0].offering, provider->Offerings()[0]);
  ASSERT_TRUE(outcomes[0].error.has_value());
  EXPECT_EQ(outcomes[0].error->kind, provider::ProviderErrorKind::kCapacity);
  EXPECT_NE(outcomes[0].error->message.find("capacity-not-available"), std::string::npos);
  EXPECT_EQ(fake_->State()["spot_requests"][0]["state"], "cancelled");
  // Without fallback the request stays open: EC2 may still fulfil it.
  config.spot_fallback = "none";
  auto patient = Provider(config);
  patient->Launch({"gpu", 1, patient->Offerings()[0]});
  EXPECT_EQ(patient->List("gpu")->size(), 1u);
  EXPECT_TRUE(patient->TakeLaunchOutcomes().empty());
}

TEST_F(AwsProviderTest, SpotRequestsAwsDoesNotShowYetAreStillReported) {
  StartFake();
  fake_->SetSpotBehaviour(false, {}, std::chrono::milliseconds(60000));
  AwsProviderConfig config = Config();
  config.spot = true;
  auto provider = Provider(config);
  provider::LaunchResult launched = provider->Launch({"gpu", 2, provider->Offerings()[0]});
  ASSERT_EQ(launched.launched.size(), 2u);
  auto listed = provider->List("gpu");
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->size(), 2u);  // from the provider's own record, not from AWS
  // Cancelling one that AWS does not list yet works (by id) and it is no longer reported.
  ASSERT_TRUE(provider->Terminate({launched.launched[0].id}).ok());
  EXPECT_EQ(provider->List("gpu")->size(), 1u);
}

// EC2's lists lag: a request the pool no longer needs may have been fulfilled already, and its
// instance may run work. Cancelling leaves the instance to the pool, which lists it as its own.
TEST_F(AwsProviderTest, CancellingARequestFulfilledSinceTheLastListLeavesItsInstanceToThePool) {
  StartFake();
  fake_->SetSpotBehaviour(true, {}, {});
  AwsProviderConfig config = Config();
  config.spot = true;
  auto provider = Provider(config);
  provider::LaunchResult launched = provider->Launch({"gpu", 1, provider->Offerings()[0]});
  ASSERT_EQ(launched.launched.size(), 1u);
  ASSERT_TRUE(provider->Terminate({launched.launched[0].id}).ok());  // fulfilled meanwhile
  const nlohmann::json state = fake_->State();
  ASSERT_EQ(state["instances"].size(), 1u);
  EXPECT_EQ(state["instances"][0]["state"], "running");
  auto listed = provider->List("gpu");
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].id, state["instances"][0]["id"]);
  EXPECT_EQ((*listed)[0].replaces, launched.launched[0].id);
}

TEST_F(AwsProviderTest, ATerminatedSpotInstanceIsNotReportedAgain) {
  StartFake();
  AwsProviderConfig config = Config();
  config.spot = true;
  auto provider = Provider(config);
  ASSERT_FALSE(provider->Launch({"gpu", 1, provider->Offerings()[0]}).error);
  auto listed = provider->List("gpu");
  ASSERT_EQ(listed->size(), 1u);
  ASSERT_TRUE((*listed)[0].id.starts_with("i-"));
  ASSERT_TRUE(provider->Terminate({(*listed)[0].id}).ok());
  EXPECT_TRUE(provider->List("gpu")->empty());
  EXPECT_TRUE(provider->List("gpu")->empty());
}

// A request cancelled after it was fulfilled (by hand, or by the autoscaler while EC2's list
// lagged) leaves its instance running, perhaps with work on it: List adopts it as the pool's (the
// pool's rules end it when idle or when its agent never comes), never terminates it behind the
// pool.
TEST_F(AwsProviderTest, AnInstanceItsCancelledRequestLeftRunningIsAdoptedNotTerminated) {
  StartFake();
  fake_->SetSpotBehaviour(false, {}, {});
  AwsProviderConfig config = Config();
  config.spot = true;
  auto provider = Provider(config);
  const std::string request =
      provider->Launch({"gpu", 1, provider->Offerings()[0]}).launched.at(0).id;
  fake_->SetSpotBehaviour(true, {}, {});
  fake_->State();  // fulfilled now, not yet tagged
  auto env = AwsEnvironment::Of(
      {{"AWS_ACCESS_KEY_ID", "AKIDFAKE"}, {"AWS_SECRET_ACCESS_KEY", "fake-secret"}});
  Ec2Client other({"us-west-2", fake_->endpoint(), {}, std::chrono::seconds(5)},
                  std::make_shared<CredentialsChain>(env, nullptr, clock_), clock_);
  ASSERT_TRUE(other.CancelSpotInstanceRequests({request}).ok());
  ASSERT_EQ(fake_->State()["instances"][0]["state"], "running");
  auto listed = provider->List("gpu");
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_TRUE((*listed)[0].id.starts_with("i-"));
  EXPECT_EQ((*listed)[0].replaces, request);
  EXPECT_EQ(fake_->State()["instances"][0]["state"], "running");
  // Tagged now: listed as the pool's by its tags, and terminated only when the pool says so.
  ASSERT_EQ(provider->List("gpu")->size(), 1u);
  ASSERT_TRUE(provider->Terminate({(*listed)[0].id}).ok());
  EXPECT_EQ(fake_->State()["instances"][0]["state"], "terminated");
}

TEST_F(AwsProviderTest, SpotFallbackOffersOnDemandAndErrorsAreClassified) {
  StartFake();
  AwsProviderConfig config = Config();
  config.spot = true;
  config.spot_fallback = "on_demand";
  auto provider = Provider(config);
  const std::vector<Offering> offerings = provider->Offerings();
  ASSERT_EQ(offerings.size(), 2u);
  EXPECT_TRUE(offerings[0].spot);
  EXPECT_FALSE(offerings[1].spot);
  fake_->InjectFault("RequestSpotInstances", "InsufficientInstanceCapacity", 500, 1);
  provider::LaunchResult spot = provider->Launch({"gpu", 1, offerings[0]});
  ASSERT_TRUE(spot.error);
  EXPECT_EQ(spot.error->kind, provider::ProviderErrorKind::kCapacity);
  fake_->InjectFault("RunInstances", "UnauthorizedOperation", 403, 1);
  provider::LaunchResult denied = provider->Launch({"gpu", 1, offerings[1]});
  ASSERT_TRUE(denied.error);
  EXPECT_EQ(denied.error->kind, provider::ProviderErrorKind::kAuth);
  EXPECT_NE(denied.error->message.find("ec2:RunInstances"), std::string::npos);
  fake_->InjectFault("RunInstances", "VcpuLimitExceeded", 400, 1);
  EXPECT_EQ(provider->Launch({"gpu", 1, offerings[1]}).error->kind,
            provider::ProviderErrorKind::kQuota);
}

TEST_F(AwsProviderTest, BootstrapStartsTheAgentWithTheInstanceIdAfterTheStartupScript) {
  StartFake(/*boot=*/true);
  const fs::path agent = dir_ / "fake-agent.sh";
  std::ofstream(agent) << "#!/bin/sh\necho \"$@\" > \"$DET_AGENT_DIR/agent-args\"\n";
  fs::permissions(agent, fs::perms::owner_all);
  std::ofstream(dir_ / "agent.key") << "public_key: P\nsecret_key: S\n";
  std::ofstream(dir_ / "master.pub") << "public_key: M\n";
  AwsProviderConfig config = Config();
  config.agent_start.agent_binary = agent.string();
  config.agent_start.agent_args = {"--log-level", "debug it's"};
  config.agent_start.agent_key_file = (dir_ / "agent.key").string();
  config.agent_start.master_public_key_file = (dir_ / "master.pub").string();
  AgentBootstrap bootstrap{"10.1.2.3", 9999, "", "echo started > \"$DET_AGENT_DIR/startup-ran\"",
                           "",         ""};
  ASSERT_TRUE(provider::LoadAgentKeys(config.agent_start, &bootstrap).ok());
  auto provider = Provider(config, bootstrap);
  provider::LaunchResult launched = provider->Launch({"gpu", 1, provider->Offerings()[0]});
  ASSERT_EQ(launched.launched.size(), 1u);
  const std::string id = launched.launched[0].id;
  const fs::path home = dir_ / "instances" / id;
  ASSERT_TRUE(det::testing::Eventually([&] { return fs::exists(home / "agent-args"); },
                                       std::chrono::seconds(20)))
      << ReadText(home / "boot.log") << ReadText(home / "bootstrap.log");
  EXPECT_EQ(ReadText(home / "agent-args"), "--config " + (home / "agent.yaml").string() +
                                               " --agent-id " + id + " --log-level debug it's\n");
  EXPECT_TRUE(fs::exists(home / "startup-ran"));
  const std::string yaml = ReadText(home / "agent.yaml");
  EXPECT_NE(yaml.find("master_host: '10.1.2.3'"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("master_port: 9999"), std::string::npos);
  EXPECT_NE(yaml.find("resource_pool: 'gpu'"), std::string::npos);
  EXPECT_NE(yaml.find("security:\n  key_file: \"" + (home / "agent.key").string() + "\""),
            std::string::npos)
      << yaml;
  EXPECT_EQ(ReadText(home / "agent.key"), "public_key: P\nsecret_key: S\n");
  // Containers on bridge networks do not reach the metadata service (the instance's firewall).
  EXPECT_NE(ReadText(home / "iptables.log").find("-I DOCKER-USER -d 169.254.169.254/32 -j REJECT"),
            std::string::npos)
      << ReadText(home / "iptables.log");
  // The agent's key and config are root's only (tasks of other accounts run on the instance).
  for (const char* file : {"agent.key", "agent.yaml"}) {
    EXPECT_EQ(fs::status(home / file).permissions() & fs::perms::all,
              fs::perms::owner_read | fs::perms::owner_write)
        << file;
  }
}

TEST_F(AwsProviderTest, AFailingStartupScriptKeepsTheAgentFromStarting) {
  StartFake(/*boot=*/true);
  const fs::path agent = dir_ / "fake-agent.sh";
  std::ofstream(agent) << "#!/bin/sh\ntouch \"$DET_AGENT_DIR/agent-ran\"\n";
  fs::permissions(agent, fs::perms::owner_all);
  AwsProviderConfig config = Config();
  config.agent_start.agent_binary = agent.string();
  auto provider = Provider(config, {"10.1.2.3", 9999, "", "echo no GPU driver; exit 3", "", ""});
  const std::string id = provider->Launch({"gpu", 1, provider->Offerings()[0]}).launched.at(0).id;
  const fs::path log = dir_ / "instances" / id / "bootstrap.log";
  ASSERT_TRUE(det::testing::Eventually(
      [&] { return ReadText(log).find("startup_script failed") != std::string::npos; },
      std::chrono::seconds(20)))
      << ReadText(log);
  EXPECT_FALSE(fs::exists(dir_ / "instances" / id / "agent-ran"));
}

TEST(AwsConfigTest, DeterminedsDefaultsAndErrorsThatNameTheField) {
  Result<AwsProviderConfig> config = ReadAwsProviderConfig(
      YAML::Load("type: aws\nimage_id: ami-1\nssh_key_name: k\n"), "cluster-9");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->root_volume_size, 200);
  EXPECT_EQ(config->tag_key, "managed-by");
  EXPECT_EQ(config->tag_value, "cluster-9");
  EXPECT_EQ(config->instance_name, "determined-ai-agent");
  EXPECT_EQ(config->instance_type, "g4dn.metal");
  EXPECT_TRUE(config->public_ip);
  EXPECT_FALSE(config->spot);
  Result<AwsProviderConfig> bad =
      ReadAwsProviderConfig(YAML::Load("type: aws\nroot_volume_size: 50\nspot_max_price: $2.50\n"
                                       "network_interface: {public_ip: maybe}\ncustom_tags: "
                                       "[{value: x}, {key: Name, value: y}]\n"
                                       "agent_key_file: /k\nendpoint_url: ftp://x\n"),
                            "c");
  ASSERT_FALSE(bad.ok());
  const std::string message = bad.status().message();
  for (const char* field :
       {"provider.image_id", "provider.ssh_key_name", "provider.root_volume_size",
        "provider.spot_max_price", "provider.network_interface.public_ip",
        "provider.custom_tags[0].key", "provider.master_public_key_file", "provider.endpoint_url",
        "provider.custom_tags[1].key"}) {
    EXPECT_NE(message.find(field), std::string::npos) << field << " in " << message;
  }
}

}  // namespace
}  // namespace det::aws
