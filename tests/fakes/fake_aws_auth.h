#pragma once

// How the AWS fakes (fake EC2, fake S3) check a request's SigV4 signature, as AWS does: the
// Authorization header is parsed, the key looked up, the scope checked, and the signature
// recomputed with cloud_aws/sigv4 over the request as received. Two kinds of keys are known: the
// fake's static pair, and instance-role keys "ASIAFAKE<n>" whose secret is "role-secret-<key>" and
// whose session token is "role-session-<key>" (what the fake IMDS hands out).

#include <optional>
#include <string>

namespace httplib {
struct Request;
}  // namespace httplib

namespace det::testing {

struct FakeAwsKeys {
  std::string access_key_id;
  std::string secret_access_key;
  std::string region;   // the only region a signature may be scoped to
  std::string service;  // "ec2", "s3"
};

// Why a request was refused: AWS's error code for `service` and its message. `region` is the
// fake's region when the signature was scoped to another (S3 answers with it).
struct AwsAuthFailure {
  std::string code;
  std::string message;
};

// nullopt when `request` is signed by a known key for `keys.region` and `keys.service`. For S3 the
// path signed is the raw request target's (decoded once), and the payload hash is the one the
// request declares: whether the body matches it is the caller's to check.
std::optional<AwsAuthFailure> VerifyAwsSignature(const httplib::Request& request,
                                                 const FakeAwsKeys& keys);

// The access key a request is signed with ("" when it has no Authorization header).
std::string SigningKeyOf(const httplib::Request& request);

}  // namespace det::testing
