#pragma once

// The Compute Engine API v1 (https://cloud.google.com/compute/docs/reference/rest/v1) over
// libcurl and JSON: instances (insert, list, get, delete) and zone operations (get, wait) of one
// project. Calls carry the credentials' bearer token (fetched again once on a 401), are retried
// with jittered exponential backoff on 429, 5xx and transport failures, and fail with an error
// classified for the autoscaler. Not thread-safe: one client per thread.

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cloud_gcp/credentials.h"
#include "common/clock.h"
#include "common/cloud_error.h"
#include "common/http_client.h"
#include "common/retry.h"
#include "common/status.h"

namespace det::gcp {

// What a failed call means: throttled (HTTP 429, rateLimitExceeded), capacity
// (ZONE_RESOURCE_POOL_EXHAUSTED and friends), quota (QUOTA_EXCEEDED, quotaExceeded), auth (401,
// 403 forbidden or insufficient permissions, credentials refused), not found (404), invalid
// (other 4xx, resourceNotReady included), transient (5xx, transport failures, a token that
// cannot be fetched for now).
using GceErrorKind = CloudErrorKind;
GceErrorKind ClassifyGceError(const std::string& code, long http_status);

struct GceError {
  std::string method;   // "instances.insert"
  std::string code;     // an operation's error code or the API's reason ("notFound"), or ""
  std::string message;  // Compute Engine's words, or what failed in the transport
  long http_status = 0;
  GceErrorKind kind = GceErrorKind::kTransient;
  // "compute.instances.insert failed: ZONE_RESOURCE_POOL_EXHAUSTED: The zone ... (HTTP 503)";
  // for permission errors it also names the IAM permission to grant.
  std::string ToString() const;
};

template <class T>
using GceResult = Result<T, GceError>;

struct GceInstance {
  std::string name;
  std::string id;
  std::string zone;          // "us-central1-a" (the last part of its URL)
  std::string machine_type;  // "n1-standard-8"
  // PROVISIONING | STAGING | RUNNING | STOPPING | SUSPENDING | SUSPENDED | REPAIRING | TERMINATED
  std::string status;
  std::map<std::string, std::string> labels;
  bool preemptible = false;
  std::string provisioning_model;  // STANDARD | SPOT
  std::string internal_ip;
  WallTime created_at{};
};

struct GceOperation {
  std::string name;
  std::string zone;
  std::string operation_type;  // insert | delete
  std::string target;          // the instance's name (the last part of targetLink)
  std::string status;          // PENDING | RUNNING | DONE
  // Set when a DONE operation failed: its first error's code and every error's message.
  std::optional<GceError> error;
  bool done() const { return status == "DONE"; }
};

struct ComputeClientOptions {
  std::string project;
  std::string endpoint_url;  // "" for https://compute.googleapis.com/compute/v1/
  RetryPolicy retry{4, std::chrono::milliseconds(250), std::chrono::seconds(20)};
  Duration timeout = std::chrono::seconds(30);
};

class ComputeClient {
 public:
  // `clock` waits between attempts (a test's SimulatedClock records the waits).
  ComputeClient(ComputeClientOptions options, std::shared_ptr<GcpCredentials> credentials,
                const Clock& clock);

  // `instance` is an Instance resource; `request_id` (a UUID) makes a retried insert create
  // nothing twice.
  GceResult<GceOperation> InsertInstance(const std::string& zone, const nlohmann::json& instance,
                                         const std::string& request_id);
  // Every page; `filter` in the API's filter syntax ("" for all).
  GceResult<std::vector<GceInstance>> ListInstances(const std::string& zone,
                                                    const std::string& filter);
  GceResult<GceInstance> GetInstance(const std::string& zone, const std::string& name);
  GceResult<GceOperation> DeleteInstance(const std::string& zone, const std::string& name,
                                         const std::string& request_id);
  GceResult<GceOperation> GetOperation(const std::string& zone, const std::string& name);
  // Blocks until the operation is DONE or about two minutes passed (the API's own limit), and
  // returns it as it then is.
  GceResult<GceOperation> WaitOperation(const std::string& zone, const std::string& name);

  // One call (after retries): the response's JSON. `timeout` zero: the options'. Public for the
  // fake's tests.
  GceResult<nlohmann::json> Call(const std::string& method, const std::string& http_method,
                                 const std::string& path, const nlohmann::json& body = nullptr,
                                 Duration timeout = Duration::zero());

  const std::string& endpoint() const { return endpoint_; }

 private:
  GceResult<nlohmann::json> Attempt(const std::string& method, const HttpRequest& request);

  ComputeClientOptions options_;
  std::string endpoint_;
  std::shared_ptr<GcpCredentials> credentials_;
  const Clock& clock_;
  HttpClient http_;
};

// How the client reads Compute Engine's JSON (the client's own code, exposed for tests and the
// fuzzer). `item` and `page` are JSON objects, as every 2xx answer the client accepts is. Nothing
// here throws: fields that are missing or of another type read as empty (false, 0, the epoch).
//
// An Instance resource.
GceInstance ReadGceInstance(const nlohmann::json& item);
// One page of instances.list: its items that are objects, and nextPageToken ("" on the last).
struct GceInstancePage {
  std::vector<GceInstance> instances;
  std::string next_page_token;
};
GceInstancePage ReadGceInstancePage(const nlohmann::json& page);
// An Operation resource; a DONE one that failed carries its error, classified, named `method`.
GceOperation ReadGceOperation(const nlohmann::json& item, const std::string& method);
// A failed call's answer: Compute Engine's error document ({"error": {"code", "message",
// "errors": [{"reason"}], "status"}}) or what there is of one, classified by its reason and the
// HTTP status.
GceError ReadGceError(const std::string& method, const HttpResponse& response);

// An RFC 4122 version 4 UUID: requestId values.
std::string NewRequestId();
// "2026-11-22T10:07:51.123-08:00" (RFC 3339 with an offset, as Compute Engine writes times);
// InvalidArgument for anything else, and for times a WallTime cannot hold (before 1678, after
// 2261).
Result<WallTime> ParseRfc3339(const std::string& text);

}  // namespace det::gcp
