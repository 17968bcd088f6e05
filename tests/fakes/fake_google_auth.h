#pragma once

// The Google side of service-account authentication, for the fake Compute Engine: a service
// account with an RSA key of its own (written as a key file, as `gcloud iam service-accounts
// keys create` would), an OAuth 2.0 token endpoint that verifies the JWT-bearer assertion
// (RS256 signature against the key's public half, kid, iss, aud, scope, iat/exp), and the
// bearer tokens it issued. Not thread-safe: the fake calls it under its own lock.

#include <chrono>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

namespace det::testing {

class FakeGoogleAuth {
 public:
  struct Answer {
    int status = 200;
    nlohmann::json body;
  };

  // A new 2048-bit RSA key for `client_email`.
  explicit FakeGoogleAuth(std::string client_email, std::chrono::seconds token_ttl);
  ~FakeGoogleAuth();

  // The key file's JSON, with `token_uri` the fake's own token endpoint.
  nlohmann::json KeyFile(const std::string& project, const std::string& token_uri) const;
  // A user's credentials (client id and secret, refresh token) this endpoint accepts.
  nlohmann::json AuthorizedUserFile(const std::string& token_uri) const;
  // POST of the token endpoint (a form body: the jwt-bearer grant with a service account's
  // assertion, or the refresh_token grant of AuthorizedUserFile()): a token, or an OAuth 2.0
  // error document.
  // `token_uri` is the endpoint's own URL (accepted as the assertion's aud, as is Google's).
  Answer Exchange(const std::string& form_body, const std::string& token_uri);
  // A token the metadata server hands out (no assertion: it is the instance's own account).
  Answer MetadataToken();
  // Whether `authorization` ("Bearer x") carries a token issued here and not expired or revoked.
  bool Authorized(const std::string& authorization) const;
  void RevokeAll();
  int tokens_issued() const { return tokens_issued_; }
  const std::string& client_email() const { return client_email_; }

 private:
  Answer Issue();
  // "" if the assertion is good, else why not.
  std::string VerifyAssertion(const std::string& jwt, const std::string& token_uri) const;

  std::string client_email_;
  std::string refresh_token_;
  std::string key_id_;
  std::string private_key_pem_;
  std::string public_key_pem_;
  std::chrono::seconds token_ttl_;
  std::map<std::string, std::chrono::system_clock::time_point> tokens_;  // → expiry
  int tokens_issued_ = 0;
};

}  // namespace det::testing
