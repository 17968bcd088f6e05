#pragma once

// The EC2 Query API (https://docs.aws.amazon.com/AWSEC2/latest/APIReference/Query-Requests.html):
// form-encoded POSTs signed with SigV4, XML answers read with pugixml. Retries throttling and
// server errors with jittered exponential backoff, as the AWS SDKs' "standard" retry mode does,
// and classifies EC2's error codes for the autoscaler.

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cloud_aws/aws_config.h"
#include "cloud_aws/credentials.h"
#include "common/clock.h"
#include "common/cloud_error.h"
#include "common/http_client.h"
#include "common/retry.h"
#include "common/status.h"

namespace det::aws {

// What a failed call means for the caller (common/cloud_error.h): throttled (RequestLimitExceeded,
// Throttling, HTTP 429), capacity (InsufficientInstanceCapacity and friends), quota
// (InstanceLimitExceeded, VcpuLimitExceeded, MaxSpotInstanceCountExceeded), auth
// (UnauthorizedOperation, AuthFailure, SignatureDoesNotMatch, no credentials), not found
// (*.NotFound), invalid (any other 4xx), transient (5xx, InternalError, transport failures).
using Ec2ErrorKind = CloudErrorKind;
Ec2ErrorKind ClassifyEc2Error(const std::string& code, long http_status);

struct Ec2Error {
  std::string action;  // "RunInstances"
  std::string code;    // EC2's code ("UnauthorizedOperation"), or "" for transport failures
  std::string message;
  long http_status = 0;
  std::string request_id;
  Ec2ErrorKind kind = Ec2ErrorKind::kTransient;
  // "ec2:RunInstances failed: UnauthorizedOperation: You are not authorized ... (HTTP 403,
  // request id ...)"; for UnauthorizedOperation it also names the IAM permission to grant.
  std::string ToString() const;
};

// A value or the error that prevented it.
template <class T>
using Ec2Result = Result<T, Ec2Error>;

struct Ec2Instance {
  std::string id;
  std::string state;  // pending | running | shutting-down | terminated | stopping | stopped
  std::string instance_type;
  std::string zone;
  std::string lifecycle;  // "spot" or "" (on-demand)
  std::string spot_request_id;
  std::string private_ip;
  WallTime launch_time{};
  std::vector<Ec2Tag> tags;
  // Its metadata service's options (metadataOptions): "required" or "optional" IMDSv2 tokens and
  // the PUT response hop limit; "" and 0 when the answer leaves them out.
  std::string metadata_tokens;
  int metadata_hop_limit = 0;
  std::string Tag(const std::string& key) const;
  // Whether only the host reaches the instance role's credentials: IMDSv2 tokens required (IMDSv1
  // answers anyone who asks) and a hop limit of 1 (a token's answer does not reach a container
  // behind a bridge network).
  bool MetadataClosedToContainers() const;
};

struct SpotRequest {
  std::string id;
  std::string state;        // open | active | closed | cancelled | failed
  std::string status_code;  // pending-evaluation, fulfilled, capacity-not-available, ...
  std::string status_message;
  std::string instance_id;  // once fulfilled
  std::string instance_type;
  std::string zone;
  WallTime create_time{};
  std::vector<Ec2Tag> tags;
  std::string Tag(const std::string& key) const;
};

struct Ec2Filter {
  std::string name;  // "tag:managed-by", "instance-state-name"
  std::vector<std::string> values;
};

// What an instance is launched with; RunInstances and RequestSpotInstances share it.
struct LaunchSpec {
  std::string image_id;
  std::string instance_type;
  std::string key_name;
  std::string iam_instance_profile_arn;
  std::string subnet_id;
  std::string security_group_id;
  bool public_ip = true;
  int root_volume_size_gb = 200;
  std::string root_device_name = "/dev/sda1";
  std::string zone;       // Placement.AvailabilityZone; "" lets EC2 pick (or the subnet decides)
  std::string user_data;  // the script itself; base64-encoded here
  std::vector<Ec2Tag> tags;
};

struct Ec2ClientOptions {
  std::string region;
  std::string endpoint_url;  // "" for https://ec2.<region>.amazonaws.com
  // The SDKs' standard mode: 3 attempts, random(0, 1 s × 2^attempt) between them, 20 s at most.
  RetryPolicy retry{3, std::chrono::seconds(1), std::chrono::seconds(20)};
  Duration timeout = std::chrono::seconds(30);
};

class Ec2Client {
 public:
  // `clock` signs the calls and waits between attempts (a test's SimulatedClock records the waits).
  Ec2Client(Ec2ClientOptions options, std::shared_ptr<CredentialsChain> credentials,
            const Clock& clock);

  // MinCount 1, MaxCount `count`: EC2 may start fewer. The metadata service closed to containers
  // (MetadataClosedToContainers), shutdown terminates, `client_token` makes a retried call launch
  // nothing twice.
  Ec2Result<std::vector<Ec2Instance>> RunInstances(const LaunchSpec& spec, int count,
                                                   const std::string& client_token);
  // Follows NextToken through every page.
  Ec2Result<std::vector<Ec2Instance>> DescribeInstances(const std::vector<Ec2Filter>& filters);
  Ec2Result<std::vector<std::string>> TerminateInstances(const std::vector<std::string>& ids);
  Ec2Result<bool> CreateTags(const std::vector<std::string>& resource_ids,
                             const std::vector<Ec2Tag>& tags);
  // Closes the metadata service of a running instance to containers as RunInstances does: spot
  // requests cannot ask for it at launch (LaunchSpecification has no MetadataOptions).
  Ec2Result<bool> ModifyInstanceMetadataOptions(const std::string& instance_id);
  // One-time requests; `max_price` "" offers up to the on-demand price. Tags go on the requests.
  Ec2Result<std::vector<SpotRequest>> RequestSpotInstances(const LaunchSpec& spec, int count,
                                                           const std::string& max_price,
                                                           const std::string& client_token);
  Ec2Result<std::vector<SpotRequest>> DescribeSpotInstanceRequests(
      const std::vector<Ec2Filter>& filters, const std::vector<std::string>& ids = {});
  Ec2Result<std::vector<std::string>> CancelSpotInstanceRequests(
      const std::vector<std::string>& ids);

  // One call with the given parameters (Action and Version added): the response body, after
  // retries. Public for the fake's tests.
  Ec2Result<std::string> Call(const std::string& action,
                              const std::map<std::string, std::string>& params);

  const std::string& endpoint() const { return endpoint_; }

 private:
  Ec2Result<std::string> Attempt(const std::string& action, const std::string& body);

  Ec2ClientOptions options_;
  std::string endpoint_;
  std::shared_ptr<CredentialsChain> credentials_;
  const Clock& clock_;
  HttpClient http_;
};

// How the client reads EC2's XML answers (the client's own code, exposed for tests and the
// fuzzer). Nothing here throws: elements that are missing or not text read as "" and times that
// are not ISO 8601 as the epoch.
//
// The items of one 200 answer to `action`, in order, and its nextToken ("" when none). The items
// are those of `instancesSet` (RunInstances, TerminateInstances), `reservationSet`'s
// `instancesSet`s (DescribeInstances) or `spotInstanceRequestSet` (the spot calls); a body that is
// not XML is a transient MalformedResponse naming `action`.
template <class T>
struct Ec2Page {
  std::vector<T> items;
  std::string next_token;
};
Ec2Result<Ec2Page<Ec2Instance>> ReadInstancesAnswer(const std::string& action,
                                                    const std::string& body);
Ec2Result<Ec2Page<SpotRequest>> ReadSpotRequestsAnswer(const std::string& action,
                                                       const std::string& body);
// The ids the items name: instanceId (TerminateInstances), else spotInstanceRequestId.
Ec2Result<Ec2Page<std::string>> ReadIdsAnswer(const std::string& action, const std::string& body);
// A failed answer (`<Response><Errors><Error><Code/><Message/></Error></Errors><RequestID/>`),
// classified by its code and `http_status`; a body without such a document is an error that
// says so.
Ec2Error ReadEc2Error(const std::string& action, long http_status, const std::string& body);

// Query-API parameters for `spec` under `prefix` ("" for RunInstances, "LaunchSpecification." for
// RequestSpotInstances). Exposed for tests.
std::map<std::string, std::string> LaunchSpecParams(const LaunchSpec& spec,
                                                    const std::string& prefix);

}  // namespace det::aws
