#include "tests/fakes/fake_google_auth.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>

#include <stdexcept>

#include "common/base64.h"
#include "common/http_client.h"

namespace det::testing {
namespace {

using SystemClock = std::chrono::system_clock;

const char* const kGoogleTokenUri = "https://oauth2.googleapis.com/token";

std::string Bio(BIO* bio) {
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<size_t>(size));
}

std::string RandomHex(size_t bytes) {
  std::string raw(bytes, '\0');
  RAND_bytes(reinterpret_cast<unsigned char*>(raw.data()), static_cast<int>(bytes));
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  for (unsigned char c : raw) {
    hex += kDigits[c >> 4];
    hex += kDigits[c & 0xf];
  }
  return hex;
}

bool VerifyRs256(const std::string& signing_input, const std::string& signature,
                 const std::string& public_key_pem) {
  BIO* bio = BIO_new_mem_buf(public_key_pem.data(), static_cast<int>(public_key_pem.size()));
  EVP_PKEY* key = PEM_read_bio_PUBKEY(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  if (key == nullptr) return false;
  EVP_MD_CTX* context = EVP_MD_CTX_new();
  const bool good =
      EVP_DigestVerifyInit(context, nullptr, EVP_sha256(), nullptr, key) == 1 &&
      EVP_DigestVerify(
          context, reinterpret_cast<const unsigned char*>(signature.data()), signature.size(),
          reinterpret_cast<const unsigned char*>(signing_input.data()), signing_input.size()) == 1;
  EVP_MD_CTX_free(context);
  EVP_PKEY_free(key);
  return good;
}

FakeGoogleAuth::Answer OAuthError(const std::string& error, const std::string& description) {
  return {400, {{"error", error}, {"error_description", description}}};
}

}  // namespace

FakeGoogleAuth::FakeGoogleAuth(std::string client_email, std::chrono::seconds token_ttl)
    : client_email_(std::move(client_email)),
      refresh_token_("1//fake-refresh-" + RandomHex(8)),
      key_id_(RandomHex(20)),
      token_ttl_(token_ttl) {
  EVP_PKEY* key = EVP_RSA_gen(2048);
  if (key == nullptr) throw std::runtime_error("OpenSSL could not make an RSA key");
  BIO* private_bio = BIO_new(BIO_s_mem());
  BIO* public_bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(private_bio, key, nullptr, nullptr, 0, nullptr, nullptr);
  PEM_write_bio_PUBKEY(public_bio, key);
  private_key_pem_ = Bio(private_bio);
  public_key_pem_ = Bio(public_bio);
  BIO_free(private_bio);
  BIO_free(public_bio);
  EVP_PKEY_free(key);
}

FakeGoogleAuth::~FakeGoogleAuth() = default;

nlohmann::json FakeGoogleAuth::KeyFile(const std::string& project,
                                       const std::string& token_uri) const {
  return {{"type", "service_account"},
          {"project_id", project},
          {"private_key_id", key_id_},
          {"private_key", private_key_pem_},
          {"client_email", client_email_},
          {"client_id", "100000000000000000001"},
          {"auth_uri", "https://accounts.google.com/o/oauth2/auth"},
          {"token_uri", token_uri}};
}

nlohmann::json FakeGoogleAuth::AuthorizedUserFile(const std::string& token_uri) const {
  return {{"type", "authorized_user"},
          {"client_id", "det-fake-client.apps.googleusercontent.com"},
          {"client_secret", "det-fake-secret"},
          {"refresh_token", refresh_token_},
          {"token_uri", token_uri}};
}

std::string FakeGoogleAuth::VerifyAssertion(const std::string& jwt,
                                            const std::string& token_uri) const {
  const size_t first = jwt.find('.');
  const size_t second = first == std::string::npos ? first : jwt.find('.', first + 1);
  if (second == std::string::npos) return "the assertion is not a JWT";
  Result<std::string> header_text = Base64UrlDecode(jwt.substr(0, first));
  Result<std::string> claims_text = Base64UrlDecode(jwt.substr(first + 1, second - first - 1));
  Result<std::string> signature = Base64UrlDecode(jwt.substr(second + 1));
  if (!header_text.ok() || !claims_text.ok() || !signature.ok()) return "malformed JWT";
  const nlohmann::json header = nlohmann::json::parse(*header_text, nullptr, false);
  const nlohmann::json claims = nlohmann::json::parse(*claims_text, nullptr, false);
  if (!header.is_object() || !claims.is_object()) return "malformed JWT";
  if (header.value("alg", "") != "RS256") return "the JWT is not signed with RS256";
  if (header.contains("kid") && header.value("kid", "") != key_id_) return "unknown key id";
  if (!VerifyRs256(jwt.substr(0, second), *signature, public_key_pem_)) {
    return "Invalid JWT Signature.";
  }
  if (claims.value("iss", "") != client_email_) return "Invalid email or User ID";
  const std::string aud = claims.value("aud", "");
  if (aud != token_uri && aud != kGoogleTokenUri) return "Invalid JWT audience: " + aud;
  const std::string scope = claims.value("scope", "");
  if (scope.find("https://www.googleapis.com/auth/cloud-platform") == std::string::npos &&
      scope.find("https://www.googleapis.com/auth/compute") == std::string::npos) {
    return "the assertion asks for no Compute Engine scope (scope: \"" + scope + "\")";
  }
  const int64_t now =
      std::chrono::duration_cast<std::chrono::seconds>(SystemClock::now().time_since_epoch())
          .count();
  const int64_t iat = claims.value("iat", int64_t{0});
  const int64_t exp = claims.value("exp", int64_t{0});
  if (exp <= now || iat > now + 60 || exp - iat > 3600) {
    return "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable "
           "timeframe.";
  }
  return "";
}

FakeGoogleAuth::Answer FakeGoogleAuth::Issue() {
  const std::string token = "ya29.fake-" + RandomHex(16);
  tokens_[token] = SystemClock::now() + token_ttl_;
  ++tokens_issued_;
  return {200,
          {{"access_token", token}, {"expires_in", token_ttl_.count()}, {"token_type", "Bearer"}}};
}

FakeGoogleAuth::Answer FakeGoogleAuth::Exchange(const std::string& form_body,
                                                const std::string& token_uri) {
  const std::map<std::string, std::string> form = FormDecode(form_body);
  auto grant = form.find("grant_type");
  const auto field = [&](const char* name) {
    auto it = form.find(name);
    return it == form.end() ? std::string() : it->second;
  };
  if (grant != form.end() && grant->second == "refresh_token") {
    if (field("client_id") != "det-fake-client.apps.googleusercontent.com" ||
        field("client_secret") != "det-fake-secret") {
      return {401, {{"error", "invalid_client"}, {"error_description", "Unauthorized"}}};
    }
    if (field("refresh_token") != refresh_token_) {
      return OAuthError("invalid_grant", "Token has been expired or revoked.");
    }
    return Issue();
  }
  if (grant == form.end() || grant->second != "urn:ietf:params:oauth:grant-type:jwt-bearer") {
    return OAuthError("unsupported_grant_type", "Invalid grant_type");
  }
  auto assertion = form.find("assertion");
  if (assertion == form.end())
    return OAuthError("invalid_request", "Missing required parameter: assertion");
  if (std::string why = VerifyAssertion(assertion->second, token_uri); !why.empty()) {
    return OAuthError("invalid_grant", why);
  }
  return Issue();
}

FakeGoogleAuth::Answer FakeGoogleAuth::MetadataToken() { return Issue(); }

bool FakeGoogleAuth::Authorized(const std::string& authorization) const {
  if (!authorization.starts_with("Bearer ")) return false;
  auto it = tokens_.find(authorization.substr(7));
  return it != tokens_.end() && SystemClock::now() < it->second;
}

void FakeGoogleAuth::RevokeAll() { tokens_.clear(); }

}  // namespace det::testing
