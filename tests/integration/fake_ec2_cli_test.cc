// The fake EC2 checked with the real `aws` CLI (Debian package awscli): every call the aws provider
// makes works against it as against EC2, signatures included, and its errors read as EC2's.
#include <gtest/gtest.h>

#include "tests/testing/fake_cloud_process.h"

namespace det {
namespace {

namespace fs = std::filesystem;

class FakeEc2CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("det-fake-ec2-cli-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    fake_ = std::make_unique<testing::FakeEc2Process>(dir_, false);
    ASSERT_GT(fake_->port(), 0) << "fake-ec2 did not start";
    const testing::CommandOutput& version = testing::AwsCliVersion();
    ASSERT_EQ(version.exit_code, 0) << "the aws CLI is needed (scripts/install-deps.sh installs "
                                       "awscli): "
                                    << version.output;
  }
  void TearDown() override {
    fake_.reset();
    fs::remove_all(dir_);
  }
  // Runs `aws ... ec2 <args>` and parses its JSON output.
  nlohmann::json Ec2(const std::string& args) {
    const testing::CommandOutput out = testing::RunAws(fake_->endpoint(), "ec2 " + args);
    EXPECT_EQ(out.exit_code, 0) << args << "\n" << out.output;
    nlohmann::json json = nlohmann::json::parse(out.output, nullptr, false);
    EXPECT_FALSE(json.is_discarded()) << out.output;
    return json;
  }

  fs::path dir_;
  std::unique_ptr<testing::FakeEc2Process> fake_;
};

TEST_F(FakeEc2CliTest, OnDemandCallsWorkWithTheAwsCli) {
  const nlohmann::json run =
      Ec2("run-instances --image-id ami-0abc --instance-type g4dn.xlarge --count 2 --key-name k "
          "--metadata-options HttpTokens=required,HttpPutResponseHopLimit=2 "
          "--instance-initiated-shutdown-behavior terminate --user-data 'echo hi' "
          "--client-token cli-token-1 "
          "--tag-specifications 'ResourceType=instance,Tags=[{Key=managed-by,Value=c1}]'");
  ASSERT_EQ(run["Instances"].size(), 2u) << run.dump();
  const std::string id = run["Instances"][0]["InstanceId"];
  EXPECT_EQ(run["Instances"][0]["State"]["Name"], "pending");
  EXPECT_EQ(run["Instances"][0]["InstanceType"], "g4dn.xlarge");
  EXPECT_EQ(run["Instances"][0]["Tags"][0]["Key"], "managed-by");
  // The CLI base64-encodes user data; the fake decodes it.
  const nlohmann::json state = fake_->Admin("state");
  EXPECT_EQ(state["instances"][0]["user_data"], "echo hi");
  EXPECT_EQ(state["instances"][0]["launch_params"]["MetadataOptions.HttpTokens"], "required");

  const nlohmann::json described =
      Ec2("describe-instances --filters Name=tag:managed-by,Values=c1 "
          "Name=instance-state-name,Values=pending,running");
  ASSERT_EQ(described["Reservations"].size(), 2u) << described.dump();
  EXPECT_EQ(described["Reservations"][0]["Instances"][0]["Placement"]["AvailabilityZone"],
            "us-west-2a");

  const testing::CommandOutput tag = testing::RunAws(
      fake_->endpoint(), "ec2 create-tags --resources " + id + " --tags Key=team,Value=vision");
  ASSERT_EQ(tag.exit_code, 0) << tag.output;  // create-tags prints nothing
  const nlohmann::json tagged = Ec2("describe-instances --filters Name=tag:team,Values=vision");
  ASSERT_EQ(tagged["Reservations"].size(), 1u);

  const nlohmann::json terminated = Ec2("terminate-instances --instance-ids " + id);
  EXPECT_EQ(terminated["TerminatingInstances"][0]["InstanceId"], id);
  EXPECT_EQ(terminated["TerminatingInstances"][0]["CurrentState"]["Name"], "shutting-down");
}

TEST_F(FakeEc2CliTest, SpotCallsWorkWithTheAwsCli) {
  fake_->Admin("spot", {{"fulfil", false}});
  const nlohmann::json made =
      Ec2("request-spot-instances --instance-count 2 --spot-price 0.50 --type one-time "
          "--client-token spot-1 "
          "--launch-specification '{\"ImageId\":\"ami-0abc\",\"InstanceType\":\"g4dn.xlarge\"}' "
          "--tag-specifications "
          "'ResourceType=spot-instances-request,Tags=[{Key=managed-by,Value=c1}]'");
  ASSERT_EQ(made["SpotInstanceRequests"].size(), 2u) << made.dump();
  const std::string first = made["SpotInstanceRequests"][0]["SpotInstanceRequestId"];
  const std::string second = made["SpotInstanceRequests"][1]["SpotInstanceRequestId"];
  EXPECT_EQ(made["SpotInstanceRequests"][0]["State"], "open");

  const nlohmann::json open =
      Ec2("describe-spot-instance-requests --filters Name=tag:managed-by,Values=c1 "
          "Name=state,Values=open");
  ASSERT_EQ(open["SpotInstanceRequests"].size(), 2u);
  EXPECT_EQ(open["SpotInstanceRequests"][0]["Status"]["Code"], "capacity-not-available");

  fake_->Admin("spot", {{"fulfil", true}});
  const nlohmann::json active =
      Ec2("describe-spot-instance-requests --spot-instance-request-ids " + first);
  EXPECT_EQ(active["SpotInstanceRequests"][0]["State"], "active");
  const std::string instance = active["SpotInstanceRequests"][0]["InstanceId"];
  EXPECT_EQ(instance.substr(0, 2), "i-");

  // A spot instance starts with EC2's default metadata options (its request could not set them);
  // the provider closes them afterwards, as RunInstances does at launch.
  auto metadata = [&] {
    return Ec2("describe-instances --instance-ids " +
               instance)["Reservations"][0]["Instances"][0]["MetadataOptions"];
  };
  EXPECT_EQ(metadata()["HttpTokens"], "optional") << metadata().dump();
  EXPECT_EQ(metadata()["HttpPutResponseHopLimit"], 1);
  const nlohmann::json modified =
      Ec2("modify-instance-metadata-options --instance-id " + instance +
          " --http-tokens required --http-put-response-hop-limit 1 --http-endpoint enabled");
  EXPECT_EQ(modified["InstanceId"], instance) << modified.dump();
  EXPECT_EQ(modified["InstanceMetadataOptions"]["State"], "pending");
  EXPECT_EQ(metadata()["HttpTokens"], "required");
  EXPECT_EQ(metadata()["State"], "applied");

  const nlohmann::json cancelled =
      Ec2("cancel-spot-instance-requests --spot-instance-request-ids " + first + " " + second);
  ASSERT_EQ(cancelled["CancelledSpotInstanceRequests"].size(), 2u) << cancelled.dump();
  EXPECT_EQ(cancelled["CancelledSpotInstanceRequests"][0]["State"], "cancelled");
}

TEST_F(FakeEc2CliTest, ErrorsAndSignaturesReadAsEc2s) {
  fake_->Admin("fault", {{"action", "RunInstances"},
                         {"code", "InsufficientInstanceCapacity"},
                         {"status", 500},
                         {"times", 10}});
  const testing::CommandOutput capacity = testing::RunAws(
      fake_->endpoint(), "ec2 run-instances --image-id ami-1 --instance-type p4d.24xlarge");
  EXPECT_NE(capacity.exit_code, 0);
  EXPECT_NE(capacity.output.find("InsufficientInstanceCapacity"), std::string::npos)
      << capacity.output;
  const testing::CommandOutput missing = testing::RunAws(
      fake_->endpoint(), "ec2 terminate-instances --instance-ids i-00000000000000000");
  EXPECT_NE(missing.output.find("InvalidInstanceID.NotFound"), std::string::npos) << missing.output;
  // A wrong secret: the fake recomputes the CLI's signature and refuses it.
  const testing::CommandOutput forged =
      testing::RunAws(fake_->endpoint(), "ec2 describe-instances", "AWS_SECRET_ACCESS_KEY=wrong");
  EXPECT_NE(forged.exit_code, 0);
  EXPECT_NE(forged.output.find("SignatureDoesNotMatch"), std::string::npos) << forged.output;
}

}  // namespace
}  // namespace det
