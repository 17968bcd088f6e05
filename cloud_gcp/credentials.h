#pragma once

// Where Compute Engine calls get their OAuth 2.0 access token, in the order Google's client
// libraries look for Application Default Credentials:
//   1. GOOGLE_APPLICATION_CREDENTIALS: a service account key (JSON, "type": "service_account"),
//      exchanged for a token at the key's token_uri with an RS256-signed JWT assertion; or an
//      "authorized_user" file (a refresh token, as `gcloud auth application-default login`
//      writes);
//   2. gcloud's application default credentials file ($CLOUDSDK_CONFIG or ~/.config/gcloud,
//      application_default_credentials.json);
//   3. the metadata server: the token of the instance's service account.
// Tokens are cached and fetched again before they expire.

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cloud_gcp/metadata.h"
#include "common/clock.h"
#include "common/environment.h"
#include "common/http_client.h"
#include "common/status.h"

namespace det::gcp {

inline constexpr const char* kComputeScope = "https://www.googleapis.com/auth/cloud-platform";
// Google's tokens live an hour; a longer `expires_in` is read as this.
inline constexpr std::chrono::seconds kMaxTokenLifetime = std::chrono::hours(24);

struct AccessToken {
  std::string token;
  WallTime expires_at{};
};

struct ServiceAccountKey {
  std::string client_email;
  std::string private_key;  // PEM
  std::string private_key_id;
  std::string token_uri = "https://oauth2.googleapis.com/token";
  std::string project_id;
};
// A key file's JSON; errors name the missing field.
Result<ServiceAccountKey> ParseServiceAccountKey(const std::string& json);

// An OAuth 2.0 token response (RFC 6749 §5) from `who` (the token endpoint, the metadata server),
// read at `now`: the token and when it expires (`expires_in` seconds, 1 h when absent, at most
// kMaxTokenLifetime, a negative one read as 0). A
// response that did not come is Unavailable; a refusal (4xx) is Unauthenticated naming the
// `error` and `error_description`; 5xx, 429 and a 200 without an access_token are Unavailable.
// Exposed for tests and the fuzzer; never throws.
Result<AccessToken> ReadTokenResponse(const Result<HttpResponse>& response, const std::string& who,
                                      WallTime now);

// One way of getting a token. Fetch() makes a network call; Unauthenticated when the token
// endpoint refuses (naming why), Unavailable when it cannot be reached.
class TokenSource {
 public:
  virtual ~TokenSource() = default;
  virtual Result<AccessToken> Fetch() = 0;
  // "service account det@p.iam.gserviceaccount.com (key file /k.json)", "metadata server".
  virtual std::string Describe() const = 0;
  // The project the credentials belong to, when they say ("" otherwise).
  virtual std::string project_id() const { return ""; }
};

class ServiceAccountTokenSource final : public TokenSource {
 public:
  ServiceAccountTokenSource(ServiceAccountKey key, std::string origin, const Clock& clock,
                            std::vector<std::string> scopes = {kComputeScope});
  Result<AccessToken> Fetch() override;
  std::string Describe() const override;
  std::string project_id() const override { return key_.project_id; }
  // The signed assertion for `now` (exposed for tests).
  Result<std::string> Assertion(WallTime now) const;

 private:
  ServiceAccountKey key_;
  std::string origin_;
  const Clock& clock_;
  std::vector<std::string> scopes_;
  HttpClient http_;
};

class AuthorizedUserTokenSource final : public TokenSource {
 public:
  AuthorizedUserTokenSource(std::string client_id, std::string client_secret,
                            std::string refresh_token, std::string token_uri, std::string origin,
                            const Clock& clock);
  Result<AccessToken> Fetch() override;
  std::string Describe() const override;

 private:
  std::string client_id_;
  std::string client_secret_;
  std::string refresh_token_;
  std::string token_uri_;
  std::string origin_;
  const Clock& clock_;
  HttpClient http_;
};

class MetadataTokenSource final : public TokenSource {
 public:
  MetadataTokenSource(std::shared_ptr<MetadataClient> metadata, const Clock& clock);
  Result<AccessToken> Fetch() override;
  std::string Describe() const override { return "the metadata server's service account"; }

 private:
  std::shared_ptr<MetadataClient> metadata_;
  const Clock& clock_;
};

// The first source of the chain at the top of this file that has credentials; Unauthenticated
// naming every place looked when none has, InvalidArgument naming the file when one is broken.
Result<std::unique_ptr<TokenSource>> ResolveTokenSource(const Environment& env,
                                                        std::shared_ptr<MetadataClient> metadata,
                                                        const Clock& clock);

// A token source with a cache: Get() fetches a token when there is none, when less than
// `refresh_before` of it is left (google-auth's 3 min 45 s), or after Invalidate() (the API said
// 401). A failed refresh while the old token is still valid returns the old token, and so does a
// refresh that hands back the same token (the metadata server keeps its own until shortly before
// it expires): the source is then asked again 30 s later, not on every call. Thread-safe.
class GcpCredentials {
 public:
  GcpCredentials(std::unique_ptr<TokenSource> source, const Clock& clock,
                 Duration refresh_before = std::chrono::seconds(225));
  Result<std::string> Get();
  void Invalidate();
  std::string Describe() const { return source_->Describe(); }
  std::string project_id() const { return source_->project_id(); }
  int fetches() const;  // how many tokens were fetched (tests)

 private:
  std::unique_ptr<TokenSource> source_;
  const Clock& clock_;
  Duration refresh_before_;
  mutable std::mutex mu_;
  std::optional<AccessToken> cached_;
  WallTime ask_again_at_{};  // after a refresh that failed or changed nothing
  int fetches_ = 0;
};

// The project: `configured`, else the credentials', else GOOGLE_CLOUD_PROJECT or
// CLOUDSDK_CORE_PROJECT, else the metadata server's; FailedPrecondition naming every place.
Result<std::string> ResolveProject(const std::string& configured, const GcpCredentials& credentials,
                                   const Environment& env, MetadataClient& metadata);

}  // namespace det::gcp
