#include "tests/fakes/fake_aws_auth.h"

#include <httplib.h>

#include <vector>

#include "cloud_aws/sigv4.h"
#include "common/http_client.h"

namespace det::testing {
namespace {

// "AWS4-HMAC-SHA256 Credential=KEY/DATE/REGION/SERVICE/aws4_request, SignedHeaders=a;b,
// Signature=x": the value of field `name`, or "".
std::string AuthorizationField(const std::string& authorization, const std::string& name) {
  const size_t at = authorization.find(name + "=");
  if (at == std::string::npos) return "";
  const size_t start = at + name.size() + 1;
  return authorization.substr(start, authorization.find(',', start) - start);
}

std::vector<std::string> Split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  for (size_t start = 0; start <= text.size();) {
    size_t end = text.find(separator, start);
    if (end == std::string::npos) end = text.size();
    parts.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

bool IsS3(const FakeAwsKeys& keys) { return keys.service == "s3"; }

AwsAuthFailure UnknownKey(const FakeAwsKeys& keys) {
  if (IsS3(keys)) {
    return {"InvalidAccessKeyId",
            "The AWS Access Key Id you provided does not exist in our records."};
  }
  return {"AuthFailure", "AWS was not able to validate the provided access credentials"};
}

AwsAuthFailure WrongScope(const FakeAwsKeys& keys, const std::string& region,
                          const std::string& service) {
  if (IsS3(keys) && service == "s3") {
    return {"AuthorizationHeaderMalformed", "The authorization header is malformed; the region '" +
                                                region + "' is wrong; expecting '" + keys.region +
                                                "'"};
  }
  return {"SignatureDoesNotMatch", "Credential should be scoped to a valid region (" + keys.region +
                                       ") and service " + keys.service + ", not " + region + "/" +
                                       service};
}

AwsAuthFailure BadToken(const FakeAwsKeys& keys) {
  if (IsS3(keys)) return {"InvalidToken", "The provided token is malformed or otherwise invalid."};
  return {"AuthFailure", "The security token included in the request is invalid"};
}

aws::SignableRequest AsSigned(const httplib::Request& request, const FakeAwsKeys& keys,
                              const std::string& signed_headers) {
  const size_t question = request.target.find('?');
  std::string path = request.path;
  if (IsS3(keys)) path = UriDecode(request.target.substr(0, question));
  aws::SignableRequest signable{request.method, path, "", {}, request.body};
  if (question != std::string::npos) signable.query = request.target.substr(question + 1);
  for (const std::string& name : Split(signed_headers, ';')) {
    signable.headers.emplace_back(name, request.get_header_value(name));
  }
  return signable;
}

}  // namespace

std::string SigningKeyOf(const httplib::Request& request) {
  const std::string credential =
      AuthorizationField(request.get_header_value("Authorization"), "Credential");
  return credential.substr(0, credential.find('/'));
}

std::optional<AwsAuthFailure> VerifyAwsSignature(const httplib::Request& request,
                                                 const FakeAwsKeys& keys) {
  const std::string authorization = request.get_header_value("Authorization");
  if (authorization.empty()) {
    if (IsS3(keys)) return AwsAuthFailure{"AccessDenied", "Access Denied"};
    return AwsAuthFailure{"MissingAuthenticationToken", "Request is missing Authentication Token"};
  }
  const std::vector<std::string> scope =
      Split(AuthorizationField(authorization, "Credential"), '/');
  if (scope.size() != 5) {
    return AwsAuthFailure{"IncompleteSignature", "Authorization header has a malformed Credential"};
  }
  const std::string& key = scope[0];
  const bool role_key = key.starts_with("ASIAFAKE");
  std::string secret;
  if (key == keys.access_key_id) {
    secret = keys.secret_access_key;
  } else if (role_key) {
    secret = "role-secret-" + key;
  } else {
    return UnknownKey(keys);
  }
  if (scope[2] != keys.region || scope[3] != keys.service) {
    return WrongScope(keys, scope[2], scope[3]);
  }
  if (role_key && request.get_header_value("X-Amz-Security-Token") != "role-session-" + key) {
    return BadToken(keys);
  }
  const aws::SignableRequest signable =
      AsSigned(request, keys, AuthorizationField(authorization, "SignedHeaders"));
  const aws::Signature expected =
      aws::ComputeSignature(signable, {key, secret, ""}, {scope[2], scope[3]});
  if (expected.authorization != authorization) {
    return AwsAuthFailure{
        "SignatureDoesNotMatch",
        "The request signature we calculated does not match the signature you provided."};
  }
  return std::nullopt;
}

}  // namespace det::testing
