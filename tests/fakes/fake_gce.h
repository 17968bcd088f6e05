#pragma once

// A fake of Compute Engine for tests: Google's OAuth 2.0 token endpoint (it verifies the service
// account's JWT assertion against the key's public key) and the Compute API v1 (it requires a
// token it issued) for one project: instances.insert/list/aggregatedList/get/delete and
// zoneOperations.get/wait. Instances go PROVISIONING → STAGING → RUNNING, operations PENDING →
// RUNNING → DONE; faults are scripted: HTTP errors per method, insert operations that end with an
// error (ZONE_RESOURCE_POOL_EXHAUSTED, QUOTA_EXCEEDED, ...), slow operations, preemption. A fake
// metadata server answers too. The real `gcloud` works against it
// (tests/integration/fake_gce_cli_test.cc).
//
// It also serves Cloud Storage's JSON API (tests/fakes/fake_gcs.h: buckets, objects listed, read
// with Range, deleted, uploaded by media, multipart and resumable uploads) on the same port, so
// the tokens it issues are the ones storage takes; the same faults (by method: objects.list,
// objects.get, objects.delete, objects.insert, buckets.insert, buckets.get, ...) and call log
// cover it. `gcloud storage` works against it (tests/integration/fake_gcs_cli_test.cc).
//
// With `boot_startup_script`, a RUNNING instance runs its startup-script metadata with bash on
// this host, with DET_GCE_METADATA_HOST pointing at its own metadata (/meta/<name>) and
// DET_AGENT_DIR at its own folder: the agent the bootstrap starts is a real det-agent.
//
// Paths: POST /token; /compute/v1/projects/<project>/...; /storage/v1/..., /upload/storage/v1/...,
// /resumable/upload/storage/v1/..., /download/storage/v1/...; the host's metadata at
// /computeMetadata/v1/...; an instance's at /meta/<name>/computeMetadata/v1/.... Admin endpoints
// (JSON, no token): POST /_fake/fault {"method","status","reason","times"}, POST
// /_fake/operation_error {"code","message","times","provisioning_model"}, POST /_fake/preempt
// {"name", "notice_ms"}, POST /_fake/revoke_tokens, GET /_fake/state, GET /_fake/calls, POST
// /_fake/gcs/buckets {"name"}, GET /_fake/gcs/objects?bucket=B&prefix=P ([{"name","size"}]).

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tests/fakes/fake_gcs.h"
#include "tests/fakes/fake_google_auth.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace det::testing {

struct FakeGceOptions {
  std::string project = "det-fake-project";
  std::string zone = "us-central1-a";
  std::string client_email = "det-autoscaler@det-fake-project.iam.gserviceaccount.com";
  std::chrono::seconds token_ttl{3600};
  bool boot_startup_script = false;
  std::filesystem::path work_dir;                  // instances' folders when booting
  std::chrono::milliseconds operation_delay{100};  // PENDING → DONE
  std::chrono::milliseconds boot_delay{200};       // STAGING → RUNNING
  size_t page_size = 500;                          // instances per list page at most
  // Cloud Storage: objects' bytes (a temporary folder of its own, removed at destruction, when
  // empty); items and prefixes per objects.list page at most; whether calls without an
  // Authorization header are let in (Google's libraries send none with STORAGE_EMULATOR_HOST).
  std::filesystem::path gcs_data_dir;
  size_t gcs_page_size = 1000;
  bool gcs_allow_anonymous = false;
};

class FakeGce {
 public:
  explicit FakeGce(FakeGceOptions options);
  ~FakeGce();
  // Listens on 127.0.0.1:`port` (0: any) and serves on threads of its own; instances and
  // operations move on every 20 ms whether asked or not.
  void Start(int port = 0);
  void Stop();
  int port() const { return port_; }
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::string compute_endpoint() const { return base_url() + "/compute/v1/"; }
  // What CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE takes.
  std::string storage_endpoint() const { return base_url() + "/storage/v1/"; }
  std::string token_uri() const { return base_url() + "/token"; }
  std::string metadata_host() const { return "127.0.0.1:" + std::to_string(port_); }

  // The service account's key file (token_uri: this fake's).
  nlohmann::json ServiceAccountKey() const;
  void WriteServiceAccountKey(const std::filesystem::path& path) const;
  // A user's credentials file (`gcloud auth application-default login` writes these).
  nlohmann::json AuthorizedUserFile() const;

  // Cloud Storage, served on this fake's port (fake_gcs.h); the four below are its admin calls.
  FakeGcs& gcs() { return *gcs_; }
  void CreateBucket(const std::string& name) { gcs_->CreateBucket(name); }
  void PutObject(const std::string& bucket, const std::string& name, const std::string& bytes) {
    gcs_->PutObject(bucket, name, bytes);
  }
  std::vector<std::string> ObjectNames(const std::string& bucket, const std::string& prefix = "") {
    return gcs_->ObjectNames(bucket, prefix);
  }
  std::optional<std::string> ObjectBytes(const std::string& bucket, const std::string& name) {
    return gcs_->ObjectBytes(bucket, name);
  }

  // The next `times` calls of `method` ("instances.insert"; "objects.delete"; "oauth2.token" for
  // the token endpoint) fail with HTTP `status` and `reason`.
  void InjectFault(const std::string& method, int status, const std::string& reason, int times);
  // The next `times` inserts (of `provisioning_model` only, when not empty: SPOT or STANDARD)
  // are accepted but their operation ends with `code`; no instance is created.
  void InjectOperationError(const std::string& code, const std::string& message, int times,
                            const std::string& provisioning_model = "");
  // While held, no operation moves on (they stay PENDING or RUNNING): a test can act on an
  // instance its insert is still creating however slowly the test runs. Released: time moves on.
  void HoldOperations(bool held);
  // Compute Engine takes the VM back: a Spot VM set to DELETE is deleted, others TERMINATED. With
  // a `notice` (Compute Engine gives about 30 s) the VM is first STOPPING and its metadata's
  // instance/preempted says TRUE.
  bool Preempt(const std::string& name,
               std::chrono::milliseconds notice = std::chrono::milliseconds::zero());
  void RevokeTokens();
  // Instances and operations as JSON (names, states, labels, what they were inserted with).
  nlohmann::json State();
  // Every Compute and Cloud Storage call so far: {"method", "path"}.
  nlohmann::json Calls();
  int CallCount(const std::string& method);
  int tokens_issued();

 private:
  struct Instance;
  struct Operation;
  struct Fault {
    int status;
    std::string reason;
    int times;
  };
  struct OperationFault {
    std::string code;
    std::string message;
    int times;
    std::string provisioning_model;
  };
  using Reply = std::pair<int, nlohmann::json>;

  void Route();
  void HandleCompute(const httplib::Request& request, httplib::Response& response);
  void HandleToken(const httplib::Request& request, httplib::Response& response);
  void HandleMetadata(const httplib::Request& request, httplib::Response& response,
                      const std::string& instance, const std::string& path);
  void HandleAdmin(const httplib::Request& request, httplib::Response& response);
  // The fault scripted for the next call of `method`, if any (one of its `times` used). mu_ held.
  std::optional<Fault> TakeFault(const std::string& method);
  // A Cloud Storage call let in: recorded, and its fault, if any.
  std::optional<std::pair<int, std::string>> AdmitStorageCall(const std::string& method,
                                                              const std::string& path);
  Reply Dispatch(const std::string& http_method, const std::vector<std::string>& parts,
                 const httplib::Request& request, std::string* method);
  // Blocks (without the lock) until operation `name` is DONE or two minutes passed.
  Reply WaitOperation(const std::string& name);
  void Advance();  // moves time-driven states on
  // A preempted VM's end: its boot killed, then deleted or TERMINATED.
  void EndPreempted(std::map<std::string, std::unique_ptr<Instance>>::iterator it);

  Reply Insert(const httplib::Request& request);
  Reply List(const httplib::Request& request, bool aggregated);
  Reply Get(const std::string& name);
  Reply Delete(const std::string& name, const httplib::Request& request);
  Reply GetOperation(const std::string& name);
  Operation& NewOperation(const std::string& type, const std::string& target);
  nlohmann::json InstanceJson(const Instance& instance) const;
  nlohmann::json OperationJson(const Operation& operation) const;
  std::string ZoneUrl() const;
  void Boot(Instance& instance);

  FakeGceOptions options_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  std::thread ticker_;  // moves states on as time passes, as the real service does
  bool stopping_ = false;
  bool operations_held_ = false;
  int port_ = 0;
  std::mutex mu_;
  FakeGoogleAuth auth_;
  std::map<std::string, std::unique_ptr<Instance>> instances_;
  std::map<std::string, std::unique_ptr<Operation>> operations_;
  std::map<std::string, std::string> request_ids_;  // requestId → operation name
  std::map<std::string, std::vector<Fault>> faults_;
  std::vector<OperationFault> operation_faults_;
  nlohmann::json calls_ = nlohmann::json::array();
  uint64_t next_id_ = 1;
  std::unique_ptr<FakeGcs> gcs_;  // calls back into this fake (tokens, faults, calls)
};

}  // namespace det::testing
