// The fake Compute Engine checked with the real `gcloud` (Debian package google-cloud-cli): a
// service account key activated against the fake's token endpoint (the fake verifies gcloud's
// JWT assertion), then `gcloud compute instances create|list|describe|delete` work against it
// as against Compute Engine, and a failed operation reads as Compute Engine's.
#include <gtest/gtest.h>

#include <fstream>

#include "tests/testing/fake_cloud_process.h"

namespace det {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class FakeGceCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("det-fake-gce-cli-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    fake_ = std::make_unique<testing::FakeGceProcess>(dir_, false);
    ASSERT_GT(fake_->port(), 0) << "fake-gce did not start";
    const testing::CommandOutput& version = testing::GcloudVersion();
    ASSERT_EQ(version.exit_code, 0)
        << "gcloud is needed (Debian package google-cloud-cli): " << version.output;
  }
  void TearDown() override {
    fake_.reset();
    fs::remove_all(dir_);
  }
  testing::CommandOutput Gcloud(const std::string& args) {
    return testing::RunGcloud(dir_ / "gcloud-config", fake_->compute_endpoint(), args);
  }
  // gcloud's JSON output (stdout; its notes go to stderr).
  json GcloudJson(const std::string& args) {
    const testing::CommandOutput out =
        testing::RunGcloud(dir_ / "gcloud-config", fake_->compute_endpoint(),
                           args + " --format json", dir_ / "gcloud.stderr");
    EXPECT_EQ(out.exit_code, 0) << args << "\n" << out.errors;
    json parsed = json::parse(out.output, nullptr, false);
    EXPECT_FALSE(parsed.is_discarded()) << out.output << out.errors;
    return parsed;
  }
  void Activate(const fs::path& key) {
    const testing::CommandOutput out =
        Gcloud("auth activate-service-account --key-file " + key.string());
    ASSERT_EQ(out.exit_code, 0) << out.output;
  }

  fs::path dir_;
  std::unique_ptr<testing::FakeGceProcess> fake_;
};

TEST_F(FakeGceCliTest, InstancesAreCreatedListedDescribedAndDeletedWithGcloud) {
  Activate(fake_->key_file());
  std::ofstream(dir_ / "startup.sh") << "#!/bin/bash\necho a, b and c\n";
  const json created = GcloudJson(
      "compute instances create det-agent-cli1 --zone us-central1-a --machine-type n1-standard-4 "
      "--image projects/det-images/global/images/det-agent --no-scopes --no-service-account "
      "--labels managed-by=c1,determined-resource-pool=gpu --metadata-from-file startup-script=" +
      (dir_ / "startup.sh").string());
  ASSERT_TRUE(created.is_array() && created.size() == 1u) << created.dump();
  EXPECT_EQ(created[0]["name"], "det-agent-cli1");
  const json state = fake_->Admin("state");
  ASSERT_EQ(state["instances"].size(), 1u);
  EXPECT_EQ(state["instances"][0]["labels"]["determined-resource-pool"], "gpu");
  EXPECT_EQ(state["instances"][0]["resource"]["metadata"]["items"][0]["value"],
            "#!/bin/bash\necho a, b and c\n");
  EXPECT_EQ(state["instances"][0]["machine_type"], "n1-standard-4");

  const json spot = GcloudJson(
      "compute instances create det-agent-cli2 --zone us-central1-a --machine-type n1-standard-4 "
      "--image det-agent --no-scopes --no-service-account --provisioning-model SPOT "
      "--instance-termination-action DELETE --labels managed-by=c1");
  ASSERT_TRUE(spot.is_array() && spot.size() == 1u) << spot.dump();
  EXPECT_EQ(spot[0]["scheduling"]["provisioningModel"], "SPOT");

  json listed = GcloudJson("compute instances list --zones us-central1-a");
  ASSERT_EQ(listed.size(), 2u) << listed.dump();
  listed = GcloudJson(
      "compute instances list --zones us-central1-a --filter labels.determined-resource-pool=gpu");
  ASSERT_EQ(listed.size(), 1u) << listed.dump();
  EXPECT_EQ(listed[0]["name"], "det-agent-cli1");
  EXPECT_EQ(GcloudJson("compute instances list").size(), 2u) << "the aggregated list";

  const json described =
      GcloudJson("compute instances describe det-agent-cli1 --zone us-central1-a");
  EXPECT_EQ(described["name"], "det-agent-cli1");
  EXPECT_EQ(described["zone"].get<std::string>().substr(
                described["zone"].get<std::string>().rfind('/') + 1),
            "us-central1-a");

  // One at a time: gcloud sends several in one batch request, which the fake does not take.
  for (const char* name : {"det-agent-cli1", "det-agent-cli2"}) {
    const testing::CommandOutput deleted =
        Gcloud(std::string("compute instances delete ") + name + " --zone us-central1-a --quiet");
    ASSERT_EQ(deleted.exit_code, 0) << deleted.output;
  }
  EXPECT_TRUE(GcloudJson("compute instances list --zones us-central1-a").empty());
  const testing::CommandOutput missing =
      Gcloud("compute instances describe det-agent-cli1 --zone us-central1-a");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.output.find("was not found"), std::string::npos) << missing.output;
}

TEST_F(FakeGceCliTest, AFailedOperationAndAForeignKeyReadAsComputeEngines) {
  // A key the fake never issued: its signature does not verify at the token endpoint.
  json foreign = json::parse(std::ifstream(fake_->key_file()));
  const testing::CommandOutput generated =
      testing::RunCommand("openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048");
  ASSERT_EQ(generated.exit_code, 0) << generated.output;
  foreign["private_key"] = generated.output;
  std::ofstream(dir_ / "foreign.json") << foreign.dump();
  const testing::CommandOutput refused =
      Gcloud("auth activate-service-account --key-file " + (dir_ / "foreign.json").string());
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.output.find("Invalid JWT Signature"), std::string::npos) << refused.output;

  Activate(fake_->key_file());
  fake_->Admin("operation_error", {{"code", "ZONE_RESOURCE_POOL_EXHAUSTED"}, {"times", 1}});
  const testing::CommandOutput exhausted = Gcloud(
      "compute instances create det-agent-cli3 --zone us-central1-a --machine-type n1-standard-4 "
      "--image det-agent --no-scopes --no-service-account");
  EXPECT_EQ(exhausted.exit_code, 1);
  EXPECT_NE(exhausted.output.find("ZONE_RESOURCE_POOL_EXHAUSTED"), std::string::npos)
      << exhausted.output;
  fake_->Admin("fault", {{"method", "instances.insert"}, {"status", 403}, {"reason", "forbidden"}});
  const testing::CommandOutput forbidden = Gcloud(
      "compute instances create det-agent-cli4 --zone us-central1-a --machine-type n1-standard-4 "
      "--image det-agent --no-scopes --no-service-account");
  EXPECT_EQ(forbidden.exit_code, 1);
  EXPECT_NE(forbidden.output.find("scripted fault: forbidden"), std::string::npos)
      << forbidden.output;
  EXPECT_TRUE(fake_->Admin("state")["instances"].empty());
}

}  // namespace
}  // namespace det
