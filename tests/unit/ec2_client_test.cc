// The EC2 Query client against the fake EC2 (which checks every SigV4 signature): each call's
// parameters and response parsing, pagination, idempotent launches, error classification and the
// SDKs' retry behaviour.
#include "cloud_aws/ec2_client.h"

#include <gtest/gtest.h>

#include "common/base64.h"
#include "tests/fakes/fake_ec2.h"

namespace det::aws {
namespace {

class Ec2ClientTest : public ::testing::Test {
 protected:
  void SetUp() override { fake_.Start(); }
  std::unique_ptr<Ec2Client> Client(const std::string& secret = "fake-secret") {
    auto env = AwsEnvironment::Of({{"AWS_ACCESS_KEY_ID", "AKIDFAKE"},
                                   {"AWS_SECRET_ACCESS_KEY", secret},
                                   {"HOME", "/nonexistent"}});
    auto chain = std::make_shared<CredentialsChain>(env, nullptr, clock_);
    Ec2ClientOptions options;
    options.region = "us-west-2";
    options.endpoint_url = fake_.endpoint();
    return std::make_unique<Ec2Client>(options, chain, waits_);
  }
  static LaunchSpec Spec() {
    LaunchSpec spec;
    spec.image_id = "ami-0123456789";
    spec.instance_type = "g4dn.xlarge";
    spec.key_name = "det-key";
    spec.iam_instance_profile_arn = "arn:aws:iam::123456789012:instance-profile/det-agent";
    spec.subnet_id = "subnet-1";
    spec.security_group_id = "sg-1";
    spec.root_volume_size_gb = 150;
    spec.user_data = "#!/bin/bash\necho hello & goodbye\n";
    spec.tags = {{"managed-by", "cluster-1"}, {"Name", "det agent"}};
    return spec;
  }
  nlohmann::json LastParams(const std::string& action) {
    nlohmann::json last;
    for (const auto& call : fake_.Calls()) {
      if (call["action"] == action) last = call["params"];
    }
    return last;
  }

  RealClock clock_;
  SimulatedClock waits_{SimulatedClock::Sleeps::kSleepAdvances};  // the clients' waits, recorded
  testing::FakeEc2 fake_{{}};
};

TEST_F(Ec2ClientTest, RunInstancesSendsWhatTheLaunchNeedsAndParsesTheReservation) {
  auto client = Client();
  Ec2Result<std::vector<Ec2Instance>> launched = client->RunInstances(Spec(), 3, "token-1");
  ASSERT_TRUE(launched.ok()) << launched.error().ToString();
  ASSERT_EQ(launched.value().size(), 3u);
  const Ec2Instance& first = launched.value()[0];
  EXPECT_TRUE(first.id.starts_with("i-"));
  EXPECT_EQ(first.state, "pending");
  EXPECT_EQ(first.instance_type, "g4dn.xlarge");
  EXPECT_EQ(first.zone, "us-west-2a");
  EXPECT_EQ(first.Tag("Name"), "det agent");
  EXPECT_NE(first.launch_time, WallTime{});
  const nlohmann::json p = LastParams("RunInstances");
  EXPECT_EQ(p["MinCount"], "1");
  EXPECT_EQ(p["MaxCount"], "3");
  EXPECT_EQ(p["ImageId"], "ami-0123456789");
  EXPECT_EQ(p["KeyName"], "det-key");
  EXPECT_EQ(p["IamInstanceProfile.Arn"], "arn:aws:iam::123456789012:instance-profile/det-agent");
  EXPECT_EQ(p["NetworkInterface.1.SubnetId"], "subnet-1");
  EXPECT_EQ(p["NetworkInterface.1.SecurityGroupId.1"], "sg-1");
  EXPECT_EQ(p["NetworkInterface.1.AssociatePublicIpAddress"], "true");
  EXPECT_EQ(p["BlockDeviceMapping.1.Ebs.VolumeSize"], "150");
  EXPECT_EQ(p["MetadataOptions.HttpTokens"], "required");
  EXPECT_EQ(p["MetadataOptions.HttpPutResponseHopLimit"], "1");
  EXPECT_EQ(p["InstanceInitiatedShutdownBehavior"], "terminate");
  EXPECT_EQ(p["ClientToken"], "token-1");
  EXPECT_EQ(p["TagSpecification.1.ResourceType"], "instance");
  EXPECT_EQ(p["TagSpecification.1.Tag.1.Key"], "managed-by");
  EXPECT_EQ(p["UserData"], Base64Encode(Spec().user_data));
  EXPECT_EQ(fake_.State()["instances"][0]["user_data"], Spec().user_data);
  EXPECT_EQ(first.metadata_tokens, "required");  // read back from metadataOptions
  EXPECT_EQ(first.metadata_hop_limit, 1);
  EXPECT_TRUE(first.MetadataClosedToContainers());
}

TEST_F(Ec2ClientTest, ARetriedClientTokenLaunchesNothingTwice) {
  auto client = Client();
  auto first = client->RunInstances(Spec(), 2, "same-token");
  auto again = client->RunInstances(Spec(), 2, "same-token");
  ASSERT_TRUE(first.ok() && again.ok());
  EXPECT_EQ(fake_.State()["instances"].size(), 2u);
  EXPECT_EQ(again.value()[0].id, first.value()[0].id);
}

TEST_F(Ec2ClientTest, DescribeInstancesFiltersByTagAndStateAndFollowsEveryPage) {
  testing::FakeEc2Options options;
  options.page_size = 5;
  testing::FakeEc2 paged(options);
  paged.Start();
  auto env = AwsEnvironment::Of(
      {{"AWS_ACCESS_KEY_ID", "AKIDFAKE"}, {"AWS_SECRET_ACCESS_KEY", "fake-secret"}});
  Ec2Client client({"us-west-2", paged.endpoint(), {}, std::chrono::seconds(5)},
                   std::make_shared<CredentialsChain>(env, nullptr, clock_), clock_);
  LaunchSpec mine = Spec();
  ASSERT_TRUE(client.RunInstances(mine, 12, "a").ok());
  LaunchSpec other = Spec();
  other.tags = {{"managed-by", "someone-else"}};
  ASSERT_TRUE(client.RunInstances(other, 2, "b").ok());
  auto listed = client.DescribeInstances(
      {{"tag:managed-by", {"cluster-1"}}, {"instance-state-name", {"pending", "running"}}});
  ASSERT_TRUE(listed.ok()) << listed.error().ToString();
  EXPECT_EQ(listed.value().size(), 12u);
  EXPECT_EQ(paged.CallCount("DescribeInstances"), 3);  // 5 + 5 + 2
}

TEST_F(Ec2ClientTest, TerminateCreateTagsAndNotFound) {
  auto client = Client();
  auto launched = client->RunInstances(Spec(), 1, "t");
  ASSERT_TRUE(launched.ok());
  const std::string id = launched.value()[0].id;
  ASSERT_TRUE(client->CreateTags({id}, {{"extra", "yes"}}).ok());
  EXPECT_EQ(fake_.State()["instances"][0]["tags"]["extra"], "yes");
  auto terminated = client->TerminateInstances({id});
  ASSERT_TRUE(terminated.ok());
  EXPECT_EQ(terminated.value(), std::vector<std::string>{id});
  auto listed = client->DescribeInstances({{"instance-state-name", {"pending", "running"}}});
  ASSERT_TRUE(listed.ok());
  EXPECT_TRUE(listed.value().empty());
  auto gone = client->TerminateInstances({"i-00000000000000000"});
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error().kind, Ec2ErrorKind::kNotFound);
  EXPECT_EQ(gone.error().code, "InvalidInstanceID.NotFound");
}

TEST_F(Ec2ClientTest, SpotRequestsAreMadeDescribedAndCancelled) {
  fake_.SetSpotBehaviour(false, {}, {});
  auto client = Client();
  auto made = client->RequestSpotInstances(Spec(), 2, "0.75", "spot-token");
  ASSERT_TRUE(made.ok()) << made.error().ToString();
  ASSERT_EQ(made.value().size(), 2u);
  EXPECT_TRUE(made.value()[0].id.starts_with("sir-"));
  EXPECT_EQ(made.value()[0].state, "open");
  const nlohmann::json p = LastParams("RequestSpotInstances");
  EXPECT_EQ(p["SpotPrice"], "0.75");
  EXPECT_EQ(p["InstanceCount"], "2");
  EXPECT_EQ(p["Type"], "one-time");
  EXPECT_EQ(p["ClientToken"], "spot-token");
  EXPECT_EQ(p["LaunchSpecification.ImageId"], "ami-0123456789");
  EXPECT_EQ(p["TagSpecification.1.ResourceType"], "spot-instances-request");
  auto open = client->DescribeSpotInstanceRequests({{"tag:managed-by", {"cluster-1"}}});
  ASSERT_TRUE(open.ok());
  ASSERT_EQ(open.value().size(), 2u);
  EXPECT_EQ(open.value()[0].status_code, "capacity-not-available");
  fake_.SetSpotBehaviour(true, {}, {});
  auto fulfilled = client->DescribeSpotInstanceRequests({}, {made.value()[0].id});
  ASSERT_TRUE(fulfilled.ok());
  EXPECT_EQ(fulfilled.value()[0].state, "active");
  EXPECT_TRUE(fulfilled.value()[0].instance_id.starts_with("i-"));
  auto cancelled = client->CancelSpotInstanceRequests({made.value()[0].id, made.value()[1].id});
  ASSERT_TRUE(cancelled.ok());
  EXPECT_EQ(cancelled.value().size(), 2u);
  auto after = client->DescribeSpotInstanceRequests({{"state", {"open", "active"}}});
  ASSERT_TRUE(after.ok());
  EXPECT_TRUE(after.value().empty());
}

TEST_F(Ec2ClientTest, ThrottlingIsRetriedWithJitteredExponentialBackoff) {
  fake_.InjectFault("DescribeInstances", "RequestLimitExceeded", 503, 2);
  auto client = Client();
  auto listed = client->DescribeInstances({});
  ASSERT_TRUE(listed.ok()) << listed.error().ToString();
  ASSERT_EQ(waits_.slept().size(), 2u);
  EXPECT_LE(waits_.slept()[0],
            std::chrono::seconds(1));  // full jitter below base * 2^0, as the SDKs
  EXPECT_LE(waits_.slept()[1], std::chrono::seconds(2));
  EXPECT_EQ(fake_.CallCount("DescribeInstances"), 3);
}

TEST_F(Ec2ClientTest, ThrottlingPastTheLastAttemptIsReportedAsThrottling) {
  fake_.InjectFault("RunInstances", "RequestLimitExceeded", 503, 5);
  auto launched = Client()->RunInstances(Spec(), 1, "x");
  ASSERT_FALSE(launched.ok());
  EXPECT_EQ(launched.error().kind, Ec2ErrorKind::kThrottled);
  EXPECT_EQ(fake_.CallCount("RunInstances"), 3);
}

TEST_F(Ec2ClientTest, ServerErrorsAreRetriedButCapacityErrorsAreNot) {
  fake_.InjectFault("RunInstances", "InternalError", 500, 1);
  auto client = Client();
  ASSERT_TRUE(client->RunInstances(Spec(), 1, "a").ok());
  fake_.InjectFault("RunInstances", "InsufficientInstanceCapacity", 500, 1);
  auto short_of_capacity = client->RunInstances(Spec(), 1, "b");
  ASSERT_FALSE(short_of_capacity.ok());
  EXPECT_EQ(short_of_capacity.error().kind, Ec2ErrorKind::kCapacity);
  EXPECT_EQ(fake_.CallCount("RunInstances"), 3);  // 2 for the first call, 1 for the second
}

TEST_F(Ec2ClientTest, UnauthorizedOperationNamesTheActionToAllow) {
  fake_.InjectFault("TerminateInstances", "UnauthorizedOperation", 403, 1);
  auto result = Client()->TerminateInstances({"i-1"});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().kind, Ec2ErrorKind::kAuth);
  const std::string message = result.error().ToString();
  EXPECT_NE(message.find("ec2:TerminateInstances"), std::string::npos) << message;
  EXPECT_NE(message.find("IAM policy"), std::string::npos) << message;
  EXPECT_NE(message.find("HTTP 403"), std::string::npos) << message;
}

TEST_F(Ec2ClientTest, TheFakeRefusesAWrongSignature) {
  auto result = Client("not-the-secret")->DescribeInstances({});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, "SignatureDoesNotMatch");
  EXPECT_EQ(result.error().kind, Ec2ErrorKind::kAuth);
}

TEST_F(Ec2ClientTest, TransportFailuresAreTransient) {
  auto env = AwsEnvironment::Of({{"AWS_ACCESS_KEY_ID", "A"}, {"AWS_SECRET_ACCESS_KEY", "B"}});
  Ec2Client client({"us-west-2", "http://127.0.0.1:1/", {2}, std::chrono::seconds(2)},
                   std::make_shared<CredentialsChain>(env, nullptr, clock_), waits_);
  auto result = client.DescribeInstances({});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().kind, Ec2ErrorKind::kTransient);
  EXPECT_NE(result.error().ToString().find("DescribeInstances"), std::string::npos);
}

TEST(Ec2ErrorTest, ClassifiesEc2Codes) {
  EXPECT_EQ(ClassifyEc2Error("RequestLimitExceeded", 503), Ec2ErrorKind::kThrottled);
  EXPECT_EQ(ClassifyEc2Error("", 429), Ec2ErrorKind::kThrottled);
  EXPECT_EQ(ClassifyEc2Error("InsufficientInstanceCapacity", 500), Ec2ErrorKind::kCapacity);
  EXPECT_EQ(ClassifyEc2Error("VcpuLimitExceeded", 400), Ec2ErrorKind::kQuota);
  EXPECT_EQ(ClassifyEc2Error("UnauthorizedOperation", 403), Ec2ErrorKind::kAuth);
  EXPECT_EQ(ClassifyEc2Error("InvalidAMIID.NotFound", 400), Ec2ErrorKind::kNotFound);
  EXPECT_EQ(ClassifyEc2Error("InvalidParameterValue", 400), Ec2ErrorKind::kInvalid);
  EXPECT_EQ(ClassifyEc2Error("Unavailable", 503), Ec2ErrorKind::kTransient);
  EXPECT_EQ(ClassifyEc2Error("Whatever", 502), Ec2ErrorKind::kTransient);
}

// Found by ec2_xml_fuzzer: a time a WallTime cannot hold overflowed it; now it reads as the epoch,
// like any other time that is not one.
TEST(Ec2AnswerTest, ASpotRequestCreatedInYear4052ReadsAsTheEpoch) {
  auto page = ReadSpotRequestsAnswer(
      "DescribeSpotInstanceRequests",
      "<DescribeSpotInstanceRequestsResponse><spotInstanceRequestSet><item>"
      "<spotInstanceRequestId>sir-1</spotInstanceRequestId><state>open</state>"
      "<createTime>4052-11-22T19:07:51.000Z</createTime></item></spotInstanceRequestSet>"
      "<nextToken>t</nextToken></DescribeSpotInstanceRequestsResponse>");
  ASSERT_TRUE(page.ok()) << page.error().ToString();
  ASSERT_EQ(page.value().items.size(), 1u);
  EXPECT_EQ(page.value().items[0].id, "sir-1");
  EXPECT_EQ(page.value().items[0].create_time, WallTime{});
  EXPECT_EQ(page.value().next_token, "t");
  auto not_xml = ReadInstancesAnswer("RunInstances", "<html>");
  ASSERT_FALSE(not_xml.ok());
  EXPECT_EQ(not_xml.error().code, "MalformedResponse");
}

}  // namespace
}  // namespace det::aws
