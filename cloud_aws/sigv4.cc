#include "cloud_aws/sigv4.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <array>
#include <ctime>
#include <map>

#include "common/strings.h"

namespace det::aws {
namespace {

std::string Lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string Hex(const unsigned char* data, size_t size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(size * 2);
  for (size_t i = 0; i < size; ++i) {
    out += kDigits[data[i] >> 4];
    out += kDigits[data[i] & 0xF];
  }
  return out;
}

std::string HmacSha256(std::string_view key, std::string_view data) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> mac{};
  unsigned int size = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), mac.data(), &size);
  return std::string(reinterpret_cast<const char*>(mac.data()), size);
}

// Trims the value and collapses runs of spaces to one (the spec's "Trimall").
std::string CanonicalHeaderValue(std::string_view value) {
  std::string out;
  bool in_space = false;
  for (char c : value) {
    const bool space = c == ' ' || c == '\t' || c == '\r' || c == '\n';
    if (space) {
      in_space = !out.empty();
      continue;
    }
    if (in_space) out += ' ';
    in_space = false;
    out += c;
  }
  return out;
}

// Removes "." and ".." segments and empty segments ("//"), keeping a trailing slash.
std::string NormalizePath(std::string_view path) {
  std::vector<std::string> segments;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    const std::string_view segment = path.substr(start, end - start);
    if (segment == "..") {
      if (!segments.empty()) segments.pop_back();
    } else if (!segment.empty() && segment != ".") {
      segments.emplace_back(segment);
    }
    start = end + 1;
  }
  std::string out = "/" + Join(segments, "/");
  const bool trailing =
      path.size() > 1 && (path.back() == '/' || path.ends_with("/.") || path.ends_with("/.."));
  if (trailing && !segments.empty()) out += '/';
  return out;
}

// Parameters decoded, then encoded strictly, sorted by name then value.
std::string CanonicalQuery(std::string_view query) {
  std::vector<std::pair<std::string, std::string>> params;
  size_t start = 0;
  while (start < query.size()) {
    size_t end = query.find('&', start);
    if (end == std::string_view::npos) end = query.size();
    const std::string_view param = query.substr(start, end - start);
    if (!param.empty()) {
      const size_t eq = param.find('=');
      const std::string_view name = param.substr(0, eq);
      const std::string_view value =
          eq == std::string_view::npos ? std::string_view() : param.substr(eq + 1);
      params.emplace_back(UriEncode(UriDecode(name), false), UriEncode(UriDecode(value), false));
    }
    start = end + 1;
  }
  std::sort(params.begin(), params.end());
  std::string out;
  for (const auto& [name, value] : params) {
    if (!out.empty()) out += '&';
    out += name + "=" + value;
  }
  return out;
}

}  // namespace

std::string SignableRequest::Header(std::string_view name) const {
  const std::string wanted = Lower(name);
  for (const auto& [key, value] : headers) {
    if (Lower(key) == wanted) return value;
  }
  return "";
}

std::string Sha256Hex(std::string_view data) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int size = 0;
  EVP_Digest(data.data(), data.size(), digest.data(), &size, EVP_sha256(), nullptr);
  return Hex(digest.data(), size);
}

std::string AmzDate(WallTime time) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(time);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  std::array<char, 32> text{};
  std::strftime(text.data(), text.size(), "%Y%m%dT%H%M%SZ", &utc);
  return text.data();
}

Signature ComputeSignature(const SignableRequest& request, const Credentials& credentials,
                           const SigningScope& scope) {
  // Headers by lower-case name; repeated names keep their values in order.
  std::map<std::string, std::vector<std::string>> headers;
  for (const auto& [name, value] : request.headers) {
    const std::string key = Lower(name);
    if (key == "authorization") continue;
    headers[key].push_back(CanonicalHeaderValue(value));
  }
  Signature signature;
  std::string canonical_headers;
  std::vector<std::string> names;
  for (const auto& [name, values] : headers) {
    canonical_headers += name + ":" + Join(values, ",") + "\n";
    names.push_back(name);
  }
  signature.signed_headers = Join(names, ";");
  const bool s3 = scope.service == "s3";
  const std::string path = s3 ? request.path : NormalizePath(request.path);
  const std::string declared_hash = s3 ? request.Header("x-amz-content-sha256") : "";
  const std::string payload_hash = declared_hash.empty() ? Sha256Hex(request.body) : declared_hash;
  signature.canonical_request = request.method + "\n" + UriEncode(path, true) + "\n" +
                                CanonicalQuery(request.query) + "\n" + canonical_headers + "\n" +
                                signature.signed_headers + "\n" + payload_hash;

  const std::string amz_date = request.Header("x-amz-date");
  const std::string date = amz_date.substr(0, 8);
  const std::string credential_scope =
      date + "/" + scope.region + "/" + scope.service + "/aws4_request";
  signature.string_to_sign = "AWS4-HMAC-SHA256\n" + amz_date + "\n" + credential_scope + "\n" +
                             Sha256Hex(signature.canonical_request);

  const std::string date_key = HmacSha256("AWS4" + credentials.secret_access_key, date);
  const std::string region_key = HmacSha256(date_key, scope.region);
  const std::string service_key = HmacSha256(region_key, scope.service);
  const std::string signing_key = HmacSha256(service_key, "aws4_request");
  const std::string mac = HmacSha256(signing_key, signature.string_to_sign);
  signature.authorization =
      "AWS4-HMAC-SHA256 Credential=" + credentials.access_key_id + "/" + credential_scope +
      ", SignedHeaders=" + signature.signed_headers +
      ", Signature=" + Hex(reinterpret_cast<const unsigned char*>(mac.data()), mac.size());
  return signature;
}

void SignRequest(SignableRequest* request, const Credentials& credentials,
                 const SigningScope& scope, WallTime now) {
  std::erase_if(request->headers, [](const auto& header) {
    const std::string name = Lower(header.first);
    return name == "authorization" || name == "x-amz-date" || name == "x-amz-security-token";
  });
  if (scope.service == "s3" && request->Header("x-amz-content-sha256").empty()) {
    request->headers.emplace_back("x-amz-content-sha256", Sha256Hex(request->body));
  }
  request->headers.emplace_back("X-Amz-Date", AmzDate(now));
  if (!credentials.session_token.empty()) {
    request->headers.emplace_back("X-Amz-Security-Token", credentials.session_token);
  }
  request->headers.emplace_back("Authorization",
                                ComputeSignature(*request, credentials, scope).authorization);
}

}  // namespace det::aws
