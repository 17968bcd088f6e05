#include "cloud_gcp/credentials.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "cloud_gcp/jwt.h"
#include "common/files.h"
#include "common/strings.h"

namespace det::gcp {
namespace {

constexpr auto kAssertionLifetime = std::chrono::hours(1);  // Google's maximum
constexpr auto kClockSkew = std::chrono::seconds(10);
constexpr const char* kJwtBearerGrant = "urn:ietf:params:oauth:grant-type:jwt-bearer";

std::string StringField(const nlohmann::json& json, const char* name) {
  auto it = json.find(name);
  return it != json.end() && it->is_string() ? it->get<std::string>() : "";
}

int64_t UnixSeconds(WallTime time) {
  return std::chrono::duration_cast<std::chrono::seconds>(time.time_since_epoch()).count();
}

Result<AccessToken> PostForm(HttpClient& http, const std::string& url,
                             const std::vector<std::pair<std::string, std::string>>& fields,
                             const std::string& who, WallTime now) {
  HttpRequest request;
  request.method = "POST";
  request.url = url;
  request.headers = {{"Content-Type", "application/x-www-form-urlencoded"}};
  request.body = FormEncode(fields);
  return ReadTokenResponse(http.Send(request), who, now);
}

// The token source a credentials file describes ("service_account" or "authorized_user").
Result<std::unique_ptr<TokenSource>> FromFile(const std::string& path, const Clock& clock) {
  std::optional<std::string> text = ReadFileText(path);
  if (!text) return InvalidArgument("credentials file " + path + " cannot be read");
  const nlohmann::json json = nlohmann::json::parse(*text, nullptr, false);
  if (!json.is_object()) return InvalidArgument("credentials file " + path + " is not JSON");
  const std::string type = StringField(json, "type");
  if (type == "service_account") {
    Result<ServiceAccountKey> key = ParseServiceAccountKey(*text);
    if (!key.ok()) return key.status().WithContext("credentials file " + path);
    return std::unique_ptr<TokenSource>(
        std::make_unique<ServiceAccountTokenSource>(*key, "key file " + path, clock));
  }
  if (type == "authorized_user") {
    for (const char* field : {"client_id", "client_secret", "refresh_token"}) {
      if (StringField(json, field).empty()) {
        return InvalidArgument("credentials file " + path + ": " + field + " is required");
      }
    }
    std::string token_uri = StringField(json, "token_uri");
    if (token_uri.empty()) token_uri = "https://oauth2.googleapis.com/token";
    return std::unique_ptr<TokenSource>(std::make_unique<AuthorizedUserTokenSource>(
        StringField(json, "client_id"), StringField(json, "client_secret"),
        StringField(json, "refresh_token"), token_uri, "file " + path, clock));
  }
  return InvalidArgument("credentials file " + path + ": type \"" + type +
                         "\" is not supported (service_account or authorized_user)");
}

}  // namespace

Result<AccessToken> ReadTokenResponse(const Result<HttpResponse>& response, const std::string& who,
                                      WallTime now) {
  if (!response.ok())
    return Unavailable(who + " cannot be reached: " + response.status().message());
  const nlohmann::json body = nlohmann::json::parse(response->body, nullptr, false);
  if (response->status != 200) {
    const std::string error = body.is_object() ? StringField(body, "error") : "";
    const std::string detail = body.is_object() ? StringField(body, "error_description") : "";
    const std::string why = error.empty() ? "HTTP " + std::to_string(response->status)
                                          : error + (detail.empty() ? "" : ": " + detail);
    if (response->status >= 500 || response->status == 429) {
      return Unavailable(who + " failed: " + why);
    }
    return Unauthenticated(who + " refused the credentials: " + why);
  }
  if (!body.is_object() || StringField(body, "access_token").empty()) {
    return Unavailable(who + " answered without an access_token");
  }
  AccessToken token{StringField(body, "access_token"), now + std::chrono::seconds(3600)};
  auto expires_in = body.find("expires_in");
  if (expires_in != body.end() && expires_in->is_number_integer()) {
    // At most kMaxTokenLifetime: a WallTime cannot hold what a broken endpoint may send.
    const int64_t seconds =
        expires_in->is_number_unsigned()
            ? static_cast<int64_t>(
                  std::min<uint64_t>(expires_in->get<uint64_t>(), kMaxTokenLifetime.count()))
            : std::clamp<int64_t>(expires_in->get<int64_t>(), 0, kMaxTokenLifetime.count());
    token.expires_at = now + std::chrono::seconds(seconds);
  }
  return token;
}

Result<ServiceAccountKey> ParseServiceAccountKey(const std::string& json_text) {
  const nlohmann::json json = nlohmann::json::parse(json_text, nullptr, false);
  if (!json.is_object()) return InvalidArgument("a service account key is a JSON object");
  ServiceAccountKey key;
  key.client_email = StringField(json, "client_email");
  key.private_key = StringField(json, "private_key");
  key.private_key_id = StringField(json, "private_key_id");
  key.project_id = StringField(json, "project_id");
  if (!StringField(json, "token_uri").empty()) key.token_uri = StringField(json, "token_uri");
  for (const auto& [field, value] :
       {std::pair{"client_email", key.client_email}, {"private_key", key.private_key}}) {
    if (value.empty()) return InvalidArgument(std::string(field) + " is required");
  }
  if (!ParseUrl(key.token_uri).ok()) {
    return InvalidArgument("token_uri: " + ParseUrl(key.token_uri).status().message());
  }
  return key;
}

ServiceAccountTokenSource::ServiceAccountTokenSource(ServiceAccountKey key, std::string origin,
                                                     const Clock& clock,
                                                     std::vector<std::string> scopes)
    : key_(std::move(key)), origin_(std::move(origin)), clock_(clock), scopes_(std::move(scopes)) {}

Result<std::string> ServiceAccountTokenSource::Assertion(WallTime now) const {
  nlohmann::json header = {{"alg", "RS256"}, {"typ", "JWT"}};
  if (!key_.private_key_id.empty()) header["kid"] = key_.private_key_id;
  // Issued a little in the past, so that a token endpoint whose clock is behind ours takes it.
  const WallTime issued = now - kClockSkew;
  const nlohmann::json claims = {{"iss", key_.client_email},
                                 {"scope", Join(scopes_, " ")},
                                 {"aud", key_.token_uri},
                                 {"iat", UnixSeconds(issued)},
                                 {"exp", UnixSeconds(issued + kAssertionLifetime)}};
  Result<std::string> signed_jwt = SignJwtRs256(header, claims, key_.private_key);
  if (!signed_jwt.ok()) return signed_jwt.status().WithContext(Describe());
  return signed_jwt;
}

Result<AccessToken> ServiceAccountTokenSource::Fetch() {
  const WallTime now = clock_.WallNow();
  DET_ASSIGN_OR_RETURN(std::string assertion, Assertion(now));
  return PostForm(http_, key_.token_uri,
                  {{"grant_type", kJwtBearerGrant}, {"assertion", assertion}},
                  "the token endpoint " + key_.token_uri + " (for " + Describe() + ")", now);
}

std::string ServiceAccountTokenSource::Describe() const {
  return "service account " + key_.client_email + " (" + origin_ + ")";
}

AuthorizedUserTokenSource::AuthorizedUserTokenSource(std::string client_id,
                                                     std::string client_secret,
                                                     std::string refresh_token,
                                                     std::string token_uri, std::string origin,
                                                     const Clock& clock)
    : client_id_(std::move(client_id)),
      client_secret_(std::move(client_secret)),
      refresh_token_(std::move(refresh_token)),
      token_uri_(std::move(token_uri)),
      origin_(std::move(origin)),
      clock_(clock) {}

Result<AccessToken> AuthorizedUserTokenSource::Fetch() {
  return PostForm(http_, token_uri_,
                  {{"grant_type", "refresh_token"},
                   {"client_id", client_id_},
                   {"client_secret", client_secret_},
                   {"refresh_token", refresh_token_}},
                  "the token endpoint " + token_uri_ + " (for " + Describe() + ")",
                  clock_.WallNow());
}

std::string AuthorizedUserTokenSource::Describe() const {
  return "user credentials (" + origin_ + ")";
}

MetadataTokenSource::MetadataTokenSource(std::shared_ptr<MetadataClient> metadata,
                                         const Clock& clock)
    : metadata_(std::move(metadata)), clock_(clock) {}

Result<AccessToken> MetadataTokenSource::Fetch() {
  const WallTime now = clock_.WallNow();
  Result<std::string> body =
      metadata_->Get("instance/service-accounts/default/token", std::chrono::seconds(10));
  if (!body.ok()) {
    if (body.status().code() == StatusCode::kNotFound) {
      return Unauthenticated("this instance has no service account (metadata server: " +
                             body.status().message() + ")");
    }
    return body.status();
  }
  HttpResponse response{200, {}, *body};
  return ReadTokenResponse(response, "the metadata server", now);
}

Result<std::unique_ptr<TokenSource>> ResolveTokenSource(const Environment& env,
                                                        std::shared_ptr<MetadataClient> metadata,
                                                        const Clock& clock) {
  if (std::optional<std::string> path = env.get("GOOGLE_APPLICATION_CREDENTIALS");
      path && !path->empty()) {
    return FromFile(*path, clock);
  }
  const std::string gcloud_dir =
      env.GetOr("CLOUDSDK_CONFIG", env.GetOr("HOME", "") + "/.config/gcloud");
  const std::string adc = gcloud_dir + "/application_default_credentials.json";
  if (ReadFileText(adc)) return FromFile(adc, clock);
  if (metadata) {
    Result<std::string> email = metadata->Get("instance/service-accounts/default/email");
    if (email.ok()) {
      return std::unique_ptr<TokenSource>(std::make_unique<MetadataTokenSource>(metadata, clock));
    }
  }
  return Unauthenticated("no Google credentials: GOOGLE_APPLICATION_CREDENTIALS is not set, " +
                         adc +
                         " does not exist, and no metadata server answers (not on Compute Engine)");
}

GcpCredentials::GcpCredentials(std::unique_ptr<TokenSource> source, const Clock& clock,
                               Duration refresh_before)
    : source_(std::move(source)), clock_(clock), refresh_before_(refresh_before) {}

Result<std::string> GcpCredentials::Get() {
  std::lock_guard lock(mu_);
  const WallTime now = clock_.WallNow();
  const auto margin = std::chrono::duration_cast<WallTime::duration>(refresh_before_);
  const bool usable = cached_ && now < cached_->expires_at;
  if (usable && (now + margin < cached_->expires_at || now < ask_again_at_)) {
    return cached_->token;
  }
  Result<AccessToken> fresh = source_->Fetch();
  ++fetches_;
  const bool unchanged = fresh.ok() && usable && fresh->token == cached_->token;
  if (!fresh.ok() || unchanged) {
    ask_again_at_ = now + std::chrono::seconds(30);
    if (usable) return cached_->token;  // still good for a while
    return fresh.status();
  }
  cached_ = *fresh;
  return cached_->token;
}

void GcpCredentials::Invalidate() {
  std::lock_guard lock(mu_);
  cached_.reset();
  ask_again_at_ = {};
}

int GcpCredentials::fetches() const {
  std::lock_guard lock(mu_);
  return fetches_;
}

Result<std::string> ResolveProject(const std::string& configured, const GcpCredentials& credentials,
                                   const Environment& env, MetadataClient& metadata) {
  if (!configured.empty()) return configured;
  if (!credentials.project_id().empty()) return credentials.project_id();
  for (const char* name : {"GOOGLE_CLOUD_PROJECT", "CLOUDSDK_CORE_PROJECT"}) {
    if (std::string value = env.GetOr(name, ""); !value.empty()) return value;
  }
  Result<std::string> from_metadata = metadata.ProjectId();
  if (from_metadata.ok()) return from_metadata;
  return FailedPrecondition(
      "provider.project: not set, and neither the credentials, GOOGLE_CLOUD_PROJECT, "
      "CLOUDSDK_CORE_PROJECT nor a metadata server name one (" +
      from_metadata.status().message() + ")");
}

}  // namespace det::gcp
