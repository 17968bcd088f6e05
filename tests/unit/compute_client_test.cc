// The Compute Engine client against the fake: each call's request and parsing, paging, request
// ids, retries of 429 and 5xx with jittered backoff, a new token after a 401, and errors
// classified and worded for the person who must fix them.
#include "cloud_gcp/compute_client.h"

#include <gtest/gtest.h>

#include "tests/fakes/fake_gce.h"
#include "tests/testing/test_util.h"

namespace det::gcp {
namespace {

using nlohmann::json;

class ComputeClientTest : public ::testing::Test {
 protected:
  void SetUp() override { Start({}); }
  void Start(testing::FakeGceOptions options) {
    options.operation_delay = std::chrono::milliseconds(50);
    fake_ = std::make_unique<testing::FakeGce>(options);
    fake_->Start();
    auto key = ParseServiceAccountKey(fake_->ServiceAccountKey().dump());
    credentials_ = std::make_shared<GcpCredentials>(
        std::make_unique<ServiceAccountTokenSource>(*key, "test", clock_), clock_);
    client_ = std::make_unique<ComputeClient>(
        ComputeClientOptions{"det-fake-project", fake_->compute_endpoint()}, credentials_, waits_);
  }
  static json Resource(const std::string& name, const std::string& pool = "a") {
    return {{"name", name},
            {"machineType", "zones/us-central1-a/machineTypes/n1-standard-4"},
            {"labels", {{"managed-by", "c1"}, {"determined-resource-pool", pool}}},
            {"disks",
             {{{"boot", true},
               {"autoDelete", true},
               {"initializeParams", {{"sourceImage", "projects/p/global/images/agent"}}}}}},
            {"networkInterfaces", {{{"network", "global/networks/default"}}}}};
  }
  GceOperation Insert(const std::string& name, const std::string& pool = "a") {
    GceResult<GceOperation> operation =
        client_->InsertInstance("us-central1-a", Resource(name, pool), NewRequestId());
    EXPECT_TRUE(operation.ok()) << (operation.ok() ? "" : operation.error().ToString());
    return operation.ok() ? operation.value() : GceOperation{};
  }

  RealClock clock_;
  SimulatedClock waits_{SimulatedClock::Sleeps::kSleepAdvances};  // the clients' waits, recorded
  std::unique_ptr<testing::FakeGce> fake_;
  std::shared_ptr<GcpCredentials> credentials_;
  std::unique_ptr<ComputeClient> client_;
};

TEST_F(ComputeClientTest, InsertRunsAsAnOperationThatWaitEndsAndTheInstanceIsListed) {
  const GceOperation operation = Insert("det-agent-1");
  EXPECT_EQ(operation.operation_type, "insert");
  EXPECT_EQ(operation.target, "det-agent-1");
  EXPECT_EQ(operation.zone, "us-central1-a");
  EXPECT_FALSE(operation.done());
  GceResult<GceOperation> done = client_->WaitOperation("us-central1-a", operation.name);
  ASSERT_TRUE(done.ok());
  EXPECT_TRUE(done.value().done());
  EXPECT_FALSE(done.value().error.has_value());
  GceResult<GceInstance> instance = client_->GetInstance("us-central1-a", "det-agent-1");
  ASSERT_TRUE(instance.ok());
  EXPECT_EQ(instance.value().machine_type, "n1-standard-4");
  EXPECT_EQ(instance.value().zone, "us-central1-a");
  EXPECT_EQ(instance.value().labels.at("determined-resource-pool"), "a");
  EXPECT_TRUE(instance.value().status == "STAGING" || instance.value().status == "RUNNING");
  EXPECT_NEAR(std::chrono::duration_cast<std::chrono::seconds>(clock_.WallNow() -
                                                               instance.value().created_at)
                  .count(),
              0, 5);  // from "...-07:00"
}

TEST_F(ComputeClientTest, ARetriedInsertWithTheSameRequestIdCreatesNothingTwice) {
  const std::string request_id = NewRequestId();
  auto first = client_->InsertInstance("us-central1-a", Resource("det-agent-2"), request_id);
  auto again = client_->InsertInstance("us-central1-a", Resource("det-agent-2"), request_id);
  ASSERT_TRUE(first.ok() && again.ok());
  EXPECT_EQ(first.value().name, again.value().name);
  auto other = client_->InsertInstance("us-central1-a", Resource("det-agent-2"), NewRequestId());
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().code, "alreadyExists");
  EXPECT_EQ(other.error().kind, GceErrorKind::kInvalid);
  EXPECT_EQ(fake_->State()["instances"].size(), 1u);
}

TEST_F(ComputeClientTest, ListFiltersByLabelsAndFollowsEveryPage) {
  testing::FakeGceOptions options;
  options.page_size = 2;
  Start(options);
  for (int i = 0; i < 5; ++i) Insert("det-a-" + std::to_string(i), "a");
  Insert("det-b-0", "b");
  GceResult<std::vector<GceInstance>> listed = client_->ListInstances(
      "us-central1-a", "(labels.managed-by = \"c1\") (labels.determined-resource-pool = \"a\")");
  ASSERT_TRUE(listed.ok()) << listed.error().ToString();
  ASSERT_EQ(listed.value().size(), 5u);
  for (const GceInstance& instance : listed.value())
    EXPECT_TRUE(instance.name.starts_with("det-a-"));
  EXPECT_EQ(fake_->CallCount("instances.list"), 3);
}

TEST_F(ComputeClientTest, DeleteAndNotFound) {
  GceResult<GceOperation> missing =
      client_->DeleteInstance("us-central1-a", "nope", NewRequestId());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().kind, GceErrorKind::kNotFound);
  fake_->HoldOperations(true);  // the insert stays unfinished however slowly this test runs
  const GceOperation insert = Insert("det-agent-3");
  GceResult<GceOperation> early =
      client_->DeleteInstance("us-central1-a", "det-agent-3", NewRequestId());
  fake_->HoldOperations(false);
  ASSERT_FALSE(early.ok()) << "not while its insert creates it";
  EXPECT_EQ(early.error().code, "resourceNotReady");
  EXPECT_EQ(early.error().kind, GceErrorKind::kInvalid);
  EXPECT_TRUE(waits_.slept().empty()) << "not retried";
  ASSERT_TRUE(client_->WaitOperation("us-central1-a", insert.name).ok());
  GceResult<GceOperation> deleted =
      client_->DeleteInstance("us-central1-a", "det-agent-3", NewRequestId());
  ASSERT_TRUE(deleted.ok());
  EXPECT_EQ(deleted.value().operation_type, "delete");
  ASSERT_TRUE(client_->WaitOperation("us-central1-a", deleted.value().name).ok());
  EXPECT_EQ(client_->GetInstance("us-central1-a", "det-agent-3").error().kind,
            GceErrorKind::kNotFound);
}

TEST_F(ComputeClientTest, AnOperationThatEndsWithAnErrorIsClassified) {
  fake_->InjectOperationError("ZONE_RESOURCE_POOL_EXHAUSTED",
                              "The zone 'projects/p/zones/us-central1-a' does not have enough "
                              "resources available to fulfill the request.",
                              1);
  const GceOperation operation = Insert("det-agent-4");
  GceResult<GceOperation> done = client_->GetOperation("us-central1-a", operation.name);
  det::testing::WaitFor([&] {
    done = client_->GetOperation("us-central1-a", operation.name);
    return !done.ok() || done.value().done();
  });
  ASSERT_TRUE(done.ok() && done.value().done());
  ASSERT_TRUE(done.value().error.has_value());
  EXPECT_EQ(done.value().error->code, "ZONE_RESOURCE_POOL_EXHAUSTED");
  EXPECT_EQ(done.value().error->kind, GceErrorKind::kCapacity);
  EXPECT_EQ(done.value().error->http_status, 503);
  EXPECT_EQ(done.value().error->ToString().rfind("compute.instances.insert failed: "
                                                 "ZONE_RESOURCE_POOL_EXHAUSTED: The zone",
                                                 0),
            0u)
      << done.value().error->ToString();
  EXPECT_TRUE(fake_->State()["instances"].empty());
}

TEST_F(ComputeClientTest, ThrottlingAndServerErrorsAreRetriedWithJitteredBackoff) {
  fake_->InjectFault("instances.list", 429, "rateLimitExceeded", 1);
  fake_->InjectFault("instances.list", 503, "backendError", 2);
  ASSERT_TRUE(client_->ListInstances("us-central1-a", "").ok());
  ASSERT_EQ(waits_.slept().size(), 3u);
  EXPECT_LT(waits_.slept()[0], std::chrono::milliseconds(250));
  EXPECT_LT(waits_.slept()[2], std::chrono::milliseconds(1000));
  EXPECT_EQ(fake_->CallCount("instances.list"), 4);
  fake_->InjectFault("instances.list", 429, "rateLimitExceeded", 4);
  GceResult<std::vector<GceInstance>> throttled = client_->ListInstances("us-central1-a", "");
  ASSERT_FALSE(throttled.ok());
  EXPECT_EQ(throttled.error().kind, GceErrorKind::kThrottled);
}

TEST_F(ComputeClientTest, PermissionErrorsNameWhatTheServiceAccountNeeds) {
  fake_->InjectFault("instances.insert", 403, "forbidden", 1);
  GceResult<GceOperation> refused =
      client_->InsertInstance("us-central1-a", Resource("det-agent-5"), NewRequestId());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, GceErrorKind::kAuth);
  EXPECT_EQ(fake_->CallCount("instances.insert"), 1) << "not retried";
  EXPECT_NE(refused.error().ToString().find(
                "compute.instances.insert failed: forbidden: scripted fault: forbidden (HTTP 403); "
                "the autoscaler's service account needs compute.instances.create"),
            std::string::npos)
      << refused.error().ToString();
}

TEST_F(ComputeClientTest, ARevokedTokenIsReplacedOnce) {
  ASSERT_TRUE(client_->ListInstances("us-central1-a", "").ok());
  fake_->RevokeTokens();
  ASSERT_TRUE(client_->ListInstances("us-central1-a", "").ok());
  EXPECT_EQ(fake_->tokens_issued(), 2);
  EXPECT_TRUE(waits_.slept().empty());
}

TEST_F(ComputeClientTest, TransportFailuresAreTransient) {
  ComputeClient dead(ComputeClientOptions{"p", "http://127.0.0.1:1/compute/v1/"}, credentials_,
                     waits_);
  GceResult<GceInstance> failed = dead.GetInstance("us-central1-a", "x");
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().kind, GceErrorKind::kTransient);
}

TEST(GceErrorTest, ClassifiesComputeEnginesCodes) {
  EXPECT_EQ(ClassifyGceError("rateLimitExceeded", 403), GceErrorKind::kThrottled);
  EXPECT_EQ(ClassifyGceError("", 429), GceErrorKind::kThrottled);
  EXPECT_EQ(ClassifyGceError("ZONE_RESOURCE_POOL_EXHAUSTED", 503), GceErrorKind::kCapacity);
  EXPECT_EQ(ClassifyGceError("ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS", 503),
            GceErrorKind::kCapacity);
  EXPECT_EQ(ClassifyGceError("QUOTA_EXCEEDED", 403), GceErrorKind::kQuota);
  EXPECT_EQ(ClassifyGceError("quotaExceeded", 403), GceErrorKind::kQuota);
  EXPECT_EQ(ClassifyGceError("forbidden", 403), GceErrorKind::kAuth);
  EXPECT_EQ(ClassifyGceError("", 401), GceErrorKind::kAuth);
  EXPECT_EQ(ClassifyGceError("notFound", 404), GceErrorKind::kNotFound);
  EXPECT_EQ(ClassifyGceError("RESOURCE_NOT_FOUND", 0), GceErrorKind::kNotFound);
  EXPECT_EQ(ClassifyGceError("backendError", 503), GceErrorKind::kTransient);
  EXPECT_EQ(ClassifyGceError("invalid", 400), GceErrorKind::kInvalid);
}

TEST(Rfc3339Test, ReadsOffsetsAndFractions) {
  const auto at = [](const char* text) { return UnixNanos(*ParseRfc3339(text)); };
  EXPECT_EQ(at("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(at("1970-01-01T00:00:01.5Z"), 1'500'000'000);
  EXPECT_EQ(at("1969-12-31T17:00:00.000-07:00"), 0);
  EXPECT_EQ(at("1970-01-01T02:30:00+02:30"), 0);
  EXPECT_FALSE(ParseRfc3339("1970-01-01 00:00:00").ok());
  EXPECT_FALSE(ParseRfc3339("1970-01-01T00:00:00").ok());
  const std::string id = NewRequestId();
  EXPECT_EQ(id.size(), 36u);
  EXPECT_EQ(id[14], '4');
  EXPECT_NE(id, NewRequestId());
}

// Found by gce_json_fuzzer: a year past 2262 overflowed the nanoseconds of a WallTime (UBSan).
TEST(Rfc3339Test, YearsAWallTimeCannotHoldAreErrorsNotOverflows) {
  for (const char* text : {"7026-11-22T10:07:51.123456789+05:30", "9999-12-31T23:59:59Z",
                           "0001-01-01T00:00:00Z", "2262-04-12T00:00:00Z"}) {
    Result<WallTime> time = ParseRfc3339(text);
    ASSERT_FALSE(time.ok()) << text;
    EXPECT_NE(time.status().message().find("out of range"), std::string::npos);
  }
  EXPECT_TRUE(ParseRfc3339("2262-04-10T00:00:00Z").ok());
  EXPECT_TRUE(ParseRfc3339("1678-01-02T00:00:00Z").ok());
}

// Found by review, reproduced through gce_json_fuzzer (its regression-* seeds): json::value()
// threw type_error out of the readers when a field had another type (and 1e300 overflowed).
TEST(GceAnswerTest, FieldsOfAnotherTypeReadAsEmptyNotAsAnException) {
  EXPECT_FALSE(ReadGceInstance(nlohmann::json::parse(R"({"scheduling": {"preemptible": "yes"}})"))
                   .preemptible);
  EXPECT_FALSE(ReadGceInstance(nlohmann::json::parse(R"({"scheduling": 5})")).preemptible);
  EXPECT_TRUE(ReadGceInstance(nlohmann::json::parse(R"({"scheduling": {"preemptible": true}})"))
                  .preemptible);
  for (const char* status : {R"("503")", "1e300", "18446744073709551615"}) {
    const GceOperation operation = ReadGceOperation(
        nlohmann::json::parse(std::string(R"({"status": "DONE", "error": {"errors": [{"code": )"
                                          R"("QUOTA_EXCEEDED"}]}, "httpErrorStatusCode": )") +
                              status + "}"),
        "instances.insert");
    ASSERT_TRUE(operation.error.has_value()) << status;
    EXPECT_EQ(operation.error->http_status, 0) << status;
    EXPECT_EQ(operation.error->kind, GceErrorKind::kQuota);
  }
  const GceOperation failed = ReadGceOperation(
      nlohmann::json::parse(R"({"error": {"errors": []}, "httpErrorStatusCode": 503})"), "m");
  EXPECT_EQ(failed.error->http_status, 503);
}

}  // namespace
}  // namespace det::gcp
