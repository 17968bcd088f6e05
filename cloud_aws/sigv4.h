#pragma once

// AWS Signature Version 4
// (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv-create-signed-request.html): the
// canonical request, the string to sign and the Authorization header, with the time passed in.
// Conformant with AWS's documented examples (kept in tests/unit/sigv4_test.cc) and its published
// test suite (../shared/testdata/aws-sig-v4-test-suite, used when it is there), which the
// unit tests run byte for byte.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/http_client.h"

namespace det::aws {

// What a request is signed with. `session_token` is set for temporary credentials (STS, instance
// roles) and goes out as X-Amz-Security-Token.
struct Credentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;
  bool empty() const { return access_key_id.empty(); }
};

// An HTTP request as it will be sent. Headers keep their order; a name may repeat (its values are
// then joined with "," in that order, as the spec says).
struct SignableRequest {
  std::string method;  // "GET", "POST"
  std::string path;    // as sent, not yet percent-encoded ("/", "/example space/")
  std::string query;   // as sent, without "?"; "" for none
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;

  // The first value of header `name` (case-insensitive), or "".
  std::string Header(std::string_view name) const;
};

// Where a signature is valid: `region` and `service` ("ec2") form the credential scope.
// Service "s3" signs as S3 wants (and as botocore's S3 signer does): the path is taken as it is
// (no "." or "//" folding: "a//b" and "./x" are keys of their own), and the payload hash is the
// request's x-amz-content-sha256 header when it has one (UNSIGNED-PAYLOAD, or a hash computed
// while streaming a file that is not in `body`).
struct SigningScope {
  std::string region;
  std::string service;
};

// The intermediate results, exposed so that tests (and the fake EC2's verifier) can compare each.
struct Signature {
  std::string canonical_request;
  std::string string_to_sign;
  std::string signed_headers;  // "host;x-amz-date"
  std::string authorization;   // the Authorization header's value
};

// Signs `request` as it is: every header present is signed, and the request's X-Amz-Date header
// (required) is the signing time. Pure: no clock, no network.
Signature ComputeSignature(const SignableRequest& request, const Credentials& credentials,
                           const SigningScope& scope);

// Adds X-Amz-Date (from `now`), X-Amz-Security-Token (when the credentials have a session token)
// and Authorization to `request`; for service "s3" also x-amz-content-sha256 (the body's hash)
// unless the request has one. Host must already be set.
void SignRequest(SignableRequest* request, const Credentials& credentials,
                 const SigningScope& scope, WallTime now);

// "20150830T123600Z" for `time`.
std::string AmzDate(WallTime time);

// RFC 3986 percent-encoding with upper-case hex, as SigV4 wants (common/http_client.h).
using det::UriDecode;
using det::UriEncode;

// Lower-case hex SHA-256 of `data`.
std::string Sha256Hex(std::string_view data);

}  // namespace det::aws
