#pragma once

// The pieces of the fake S3 (tests/fakes/fake_s3.h) that its files share: its state's types, and
// how it reads bodies and writes S3's answers. Only fake_s3*.cc include this.

#include <fcntl.h>
#include <httplib.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>

#include "cloud_aws/sigv4.h"
#include "common/base64.h"
#include "tests/fakes/fake_s3.h"
#include "tests/fakes/fake_xml.h"
#include "tests/fakes/served_file.h"

namespace det::testing {

struct FakeS3::Object {
  std::filesystem::path file;
  uint64_t size = 0;
  std::string etag;  // with its quotes, as S3 sends it
  std::string content_type;
  std::chrono::system_clock::time_point modified;
};

struct FakeS3::Bucket {
  std::string region;
  std::chrono::system_clock::time_point created;
  std::map<std::string, Object> objects;
};

struct FakeS3::Upload {
  std::string bucket;
  std::string key;
  std::map<int, Object> parts;
};

// One request as the fake reads it: which call, on what.
struct FakeS3::Call {
  const httplib::Request& request;
  const httplib::ContentReader* reader;  // PUTs: the body, not yet read
  std::map<std::string, std::string> params;
  std::string bucket;
  std::string key;
  bool virtual_host = false;
  std::string op;
};

namespace s3wire {
namespace fs = std::filesystem;
using Clock = std::chrono::system_clock;

inline constexpr const char* kNamespace = "http://s3.amazonaws.com/doc/2006-03-01/";

// MD5 and SHA-256 of bytes fed in pieces.
class Digests {
 public:
  Digests() : md5_(EVP_MD_CTX_new()), sha256_(EVP_MD_CTX_new()) {
    EVP_DigestInit_ex(md5_, EVP_md5(), nullptr);
    EVP_DigestInit_ex(sha256_, EVP_sha256(), nullptr);
  }
  ~Digests() {
    EVP_MD_CTX_free(md5_);
    EVP_MD_CTX_free(sha256_);
  }
  Digests(const Digests&) = delete;
  Digests& operator=(const Digests&) = delete;
  void Update(const char* data, size_t size) {
    EVP_DigestUpdate(md5_, data, size);
    EVP_DigestUpdate(sha256_, data, size);
  }
  // Raw MD5 and hex SHA-256; call once.
  std::pair<std::string, std::string> Finish() {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int size = 0;
    EVP_DigestFinal_ex(md5_, digest, &size);
    std::string md5(reinterpret_cast<char*>(digest), size);
    EVP_DigestFinal_ex(sha256_, digest, &size);
    return {md5, Hex(std::string(reinterpret_cast<char*>(digest), size))};
  }
  static std::string Hex(const std::string& bytes) {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string out;
    for (unsigned char c : bytes) {
      out += kDigits[c >> 4];
      out += kDigits[c & 0xF];
    }
    return out;
  }
  static std::string Md5(const std::string& bytes) {
    Digests digests;
    digests.Update(bytes.data(), bytes.size());
    return digests.Finish().first;
  }

 private:
  EVP_MD_CTX* md5_;
  EVP_MD_CTX* sha256_;
};

inline std::string S3Document(const std::string& root, const std::string& inner) {
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<" + root + " xmlns=\"" + kNamespace + "\">" +
         inner + "</" + root + ">";
}

inline std::string HttpDate(Clock::time_point time) {
  const std::time_t seconds = Clock::to_time_t(time);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[64];
  std::strftime(text, sizeof(text), "%a, %d %b %Y %H:%M:%S GMT", &utc);
  return text;
}

// S3's error answer: the status, and (but for HEAD, which has no body) the error document.
inline void Fail(const httplib::Request& request, httplib::Response& response, int status,
                 const std::string& code, const std::string& message,
                 const std::string& extra = "") {
  response.status = status;
  if (request.method == "HEAD") return;
  response.set_content("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error>" +
                           Element("Code", code) + Element("Message", message) + extra +
                           Element("RequestId", response.get_header_value("x-amz-request-id")) +
                           "</Error>",
                       "application/xml");
}

inline int StatusOf(const std::string& code) {
  static const std::map<std::string, int> kStatuses = {
      {"AccessDenied", 403}, {"InvalidAccessKeyId", 403},  {"SignatureDoesNotMatch", 403},
      {"InvalidToken", 400}, {"IncompleteSignature", 400}, {"AuthorizationHeaderMalformed", 400}};
  auto it = kStatuses.find(code);
  return it == kStatuses.end() ? 400 : it->second;
}

inline bool IsHex64(const std::string& text) {
  return text.size() == 64 && text.find_first_not_of("0123456789abcdef") == std::string::npos;
}

// Whether `declared` (x-amz-content-sha256) and Content-MD5 agree with what was received;
// otherwise the failure is written to `response`.
inline bool BodyMatches(const httplib::Request& request, httplib::Response& response,
                        const std::string& md5, const std::string& sha256) {
  const std::string declared = request.get_header_value("x-amz-content-sha256");
  if (IsHex64(declared) && declared != sha256) {
    Fail(request, response, 400, "XAmzContentSHA256Mismatch",
         "The provided 'x-amz-content-sha256' header does not match what was computed.");
    return false;
  }
  const std::string content_md5 = request.get_header_value("Content-MD5");
  if (!content_md5.empty() && content_md5 != Base64Encode(md5)) {
    Fail(request, response, 400, "BadDigest",
         "The Content-MD5 you specified did not match what we received.");
    return false;
  }
  return true;
}

// The bytes of a received body, written to `file` as they come; nullopt (and `response` written)
// when the request's hashes say they are not what was sent.
inline std::optional<std::pair<uint64_t, std::string>> Receive(const httplib::Request& request,
                                                               httplib::Response& response,
                                                               const httplib::ContentReader& reader,
                                                               const fs::path& file) {
  std::ofstream out(file, std::ios::binary);
  Digests digests;
  uint64_t size = 0;
  reader([&](const char* data, size_t length) {
    out.write(data, static_cast<std::streamsize>(length));
    digests.Update(data, length);
    size += length;
    return static_cast<bool>(out);
  });
  out.close();
  const auto [md5, sha256] = digests.Finish();
  if (!out) {
    Fail(request, response, 500, "InternalError", "the fake could not store the body");
    fs::remove(file);
    return std::nullopt;
  }
  if (!BodyMatches(request, response, md5, sha256)) {
    fs::remove(file);
    return std::nullopt;
  }
  return std::make_pair(size, md5);
}

// Reads and drops a body that will not be used (the connection stays usable for the next call).
inline void Drain(const httplib::ContentReader* reader) {
  if (reader != nullptr) (*reader)([](const char*, size_t) { return true; });
}

// ETags compare without their quotes (clients send either).
inline std::string Unquoted(const std::string& etag) {
  return etag.size() >= 2 && etag.front() == '"' ? etag.substr(1, etag.size() - 2) : etag;
}

inline std::string ReadBody(const httplib::ContentReader& reader) {
  std::string body;
  reader([&](const char* data, size_t length) {
    body.append(data, length);
    return body.size() < (1 << 20);
  });
  return body;
}

// Puts `value` at `key` of `map` (objects by key, parts by number); the bytes of one it replaces
// are removed.
template <class Map, class Key>
void Replace(Map& map, const Key& key, const FakeS3::Object& value) {
  auto [it, inserted] = map.try_emplace(key, value);
  if (!inserted) {
    fs::remove(it->second.file);
    it->second = value;
  }
}

}  // namespace s3wire
}  // namespace det::testing
