#pragma once

// A fake of EC2's Query API and of IMDSv2, for tests: it verifies SigV4 signatures, answers with
// EC2-shaped XML and error documents, and scripts what real clouds do to autoscalers (throttling,
// InsufficientInstanceCapacity, 5xx, slow or never-fulfilled spot requests, spot requests that
// DescribeSpotInstanceRequests does not show yet, spot interruptions). The real `aws` CLI works
// against it (tests/integration/fake_ec2_cli_test.cc checks every call the provider makes).
//
// With `boot_user_data`, a launched instance runs its user data with bash on this host, with
// DET_IMDS_ENDPOINT pointing at its own metadata (/imds/<instance id>) and DET_AGENT_DIR at its own
// folder: the agent the bootstrap starts is a real det-agent.
//
// Admin endpoints (JSON, no signature): POST /_fake/fault {"action","code","status","times"},
// POST /_fake/interrupt {"instance_id", "notice_ms"}, POST /_fake/spot {"fulfil": bool,
// "delay_ms", "visibility_delay_ms"}, POST /_fake/lag {"describe_instances_ms"}, GET
// /_fake/state, GET /_fake/calls.

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cloud_aws/sigv4.h"
#include "common/clock.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace det::testing {

struct FakeEc2Options {
  std::string access_key_id = "AKIDFAKE";
  std::string secret_access_key = "fake-secret";
  std::string region = "us-west-2";
  std::string zone = "us-west-2a";
  bool boot_user_data = false;
  std::filesystem::path work_dir;  // instances' folders when booting
  // How long a launched instance stays "pending" before "running".
  std::chrono::milliseconds boot_delay{200};
  // Host-level IMDS (for the caller's own credentials): role name and its credentials.
  std::string instance_role = "det-autoscaler-role";
  std::chrono::seconds role_credentials_ttl{3600};
  bool rotate_role_credentials = true;  // false: the same credentials at every request
  // DescribeInstances pages hold at most this many reservations (and MaxResults).
  size_t page_size = 1000;
  // The address it listens on; instances' IMDS endpoint is there too.
  std::string host = "127.0.0.1";
  // When booting: argv the boot runs under, with the instance's id and then `bash SCRIPT`
  // appended (the multi-host tests make each instance a host of its own with it).
  std::vector<std::string> boot_wrapper;
  // EC2's time: boots, visibility, spot reclaims and credential expiry go by it. Null: the real
  // clocks; a test's SimulatedClock moves them without sleeping. Outlives the fake.
  const Clock* clock = nullptr;
};

class FakeEc2 {
 public:
  explicit FakeEc2(FakeEc2Options options);
  ~FakeEc2();
  // Listens on `host`:`port` (0: any) and serves on a thread of its own.
  void Start(int port = 0);
  void Stop();
  int port() const { return port_; }
  std::string endpoint() const {
    return "http://" + options_.host + ":" + std::to_string(port_) + "/";
  }

  // The next `times` calls of `action` fail with `code` and HTTP `status`.
  void InjectFault(const std::string& action, const std::string& code, int status, int times);
  // The next `times` calls of `action` are answered (as usual) only after `delay`.
  void InjectDelay(const std::string& action, std::chrono::milliseconds delay, int times);
  // Spot requests are fulfilled (after `delay`) or stay open with capacity-not-available.
  void SetSpotBehaviour(bool fulfil, std::chrono::milliseconds delay,
                        std::chrono::milliseconds visibility_delay);
  // EC2 takes the spot instance back: terminated, its request closed. With a `notice` (EC2
  // gives two minutes) the request is first marked-for-termination and the instance's IMDS
  // answers spot/instance-action with the time; the instance ends when the notice runs out.
  bool InterruptSpot(const std::string& instance_id,
                     std::chrono::milliseconds notice = std::chrono::milliseconds::zero());
  // Instances launched from now on stay out of DescribeInstances for `delay` (EC2's eventual
  // consistency: by id they are InvalidInstanceID.NotFound meanwhile).
  void SetInstanceVisibilityDelay(std::chrono::milliseconds delay);
  // Instances and spot requests as JSON (ids, states, tags, parameters launched with).
  nlohmann::json State();
  // Every API call so far: {"action", "params"}.
  nlohmann::json Calls();
  int CallCount(const std::string& action);
  // How many role credentials the host IMDS handed out (refresh tests).
  int credentials_served() const;

 private:
  struct Instance;
  struct SpotRequest;
  struct Fault {
    std::string code;  // "": no error, only `delay`
    int status;
    int times;
    std::chrono::milliseconds delay{0};
  };
  using Params = std::map<std::string, std::string>;

  void Route();
  void HandleApi(const httplib::Request& request, httplib::Response& response);
  void HandleImds(const httplib::Request& request, httplib::Response& response,
                  const std::string& instance_id);
  void HandleAdmin(const httplib::Request& request, httplib::Response& response);
  std::string Dispatch(const std::string& action, const Params& params, int* status);
  void Advance();  // moves time-driven states on (pending → running, spot fulfilment)

  std::string RunInstances(const Params& params, int* status);
  std::string DescribeInstances(const Params& params, int* status);
  std::string TerminateInstances(const Params& params, int* status);
  std::string CreateTags(const Params& params, int* status);
  std::string ModifyInstanceMetadataOptions(const Params& params, int* status);
  std::string RequestSpotInstances(const Params& params, int* status);
  std::string DescribeSpotInstanceRequests(const Params& params, int* status);
  std::string CancelSpotInstanceRequests(const Params& params, int* status);

  Instance& NewInstance(const Params& params, const std::string& prefix, bool spot);
  // EC2 takes a spot instance back: shutting down, its agent gone, its request closed.
  void Reclaim(Instance& instance);
  void Boot(Instance& instance);
  void Reap();

  FakeEc2Options options_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
  mutable std::mutex mu_;
  std::map<std::string, std::unique_ptr<Instance>> instances_;
  std::map<std::string, std::unique_ptr<SpotRequest>> spot_requests_;
  std::map<std::string, std::vector<Fault>> faults_;
  std::map<std::string, std::string> client_tokens_;  // token → reservation or request ids
  nlohmann::json calls_ = nlohmann::json::array();
  bool spot_fulfil_ = true;
  std::chrono::milliseconds spot_delay_{0};
  std::chrono::milliseconds spot_visibility_delay_{0};
  std::chrono::milliseconds instance_visibility_delay_{0};
  std::set<std::string> imds_tokens_;
  int next_id_ = 1;
  // 4 random hex digits in every instance and reservation id: two fakes (tests running side by
  // side) never hand out the same ids, as EC2 never does, so their agents' default work folders
  // (/tmp/det-agent/<instance id>) stay apart.
  std::string id_realm_;
  int credentials_served_ = 0;
  std::string role_key_;
  WallTime role_expiration_{};
  WallTime Now() const {
    return (options_.clock ? *options_.clock : RealClock::Instance()).WallNow();
  }
};

}  // namespace det::testing
