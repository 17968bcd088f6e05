#pragma once

// The pieces of the fake Cloud Storage (tests/fakes/fake_gcs.h) that its files share: its state's
// types, its hashes, and how it reads bodies and writes Google's answers. Only fake_gcs*.cc
// include this.

#include <httplib.h>
#include <openssl/evp.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/base64.h"
#include "tests/fakes/fake_gcs.h"
#include "tests/fakes/served_file.h"

namespace det::testing {

struct FakeGcs::Object {
  std::filesystem::path file;
  uint64_t size = 0;
  std::string md5;  // the 16 raw bytes
  uint32_t crc32c = 0;
  std::string content_type;
  int64_t generation = 0;
  std::chrono::system_clock::time_point created;
};

struct FakeGcs::Bucket {
  std::chrono::system_clock::time_point created;
  std::map<std::string, Object> objects;
};

// A resumable upload: its bytes so far are the first `received` of `file`.
struct FakeGcs::Session {
  std::string bucket;
  std::string name;
  std::string content_type;
  std::filesystem::path file;
  uint64_t received = 0;
  std::optional<uint64_t> total;  // once a Content-Range (or X-Upload-Content-Length) told it
  std::optional<int64_t> if_generation_match;
  bool receiving = false;                // a PUT's body is being written
  std::optional<nlohmann::json> result;  // the Object, once the last byte came
};

// One request as the fake reads it: which method, on what.
struct FakeGcs::Call {
  const httplib::Request& request;
  const httplib::ContentReader* reader;  // POST and PUT of uploads: the body, not yet read
  std::string method;                    // "objects.get"; "unknown"
  std::string bucket;
  std::string object;  // decoded once
  bool media = false;  // alt=media, or the /download/ path
};

namespace gcswire {

using Clock = std::chrono::system_clock;

// CRC-32C (Castagnoli, reflected 0x82F63B78), as Cloud Storage's crc32c.
inline uint32_t Crc32cUpdate(uint32_t crc, const char* data, size_t size) {
  static const std::array<uint32_t, 256> kTable = [] {
    std::array<uint32_t, 256> table{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int bit = 0; bit < 8; ++bit) c = (c & 1) != 0 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
      table[i] = c;
    }
    return table;
  }();
  crc = ~crc;
  for (size_t i = 0; i < size; ++i) {
    crc = kTable[(crc ^ static_cast<unsigned char>(data[i])) & 0xFF] ^ (crc >> 8);
  }
  return ~crc;
}

// MD5 and CRC-32C of bytes fed in pieces.
class Hashes {
 public:
  Hashes() : md5_(EVP_MD_CTX_new()) { EVP_DigestInit_ex(md5_, EVP_md5(), nullptr); }
  ~Hashes() { EVP_MD_CTX_free(md5_); }
  Hashes(const Hashes&) = delete;
  Hashes& operator=(const Hashes&) = delete;
  void Update(const char* data, size_t size) {
    EVP_DigestUpdate(md5_, data, size);
    crc32c_ = Crc32cUpdate(crc32c_, data, size);
    size_ += size;
  }
  // Sets the object's size, md5 and crc32c; call once.
  void Finish(FakeGcs::Object& object) {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    EVP_DigestFinal_ex(md5_, digest, &length);
    object.md5.assign(reinterpret_cast<char*>(digest), length);
    object.crc32c = crc32c_;
    object.size = size_;
  }

 private:
  EVP_MD_CTX* md5_;
  uint32_t crc32c_ = 0;
  uint64_t size_ = 0;
};

// crc32c as the API writes it: base64 of the 4 big-endian bytes.
inline std::string Crc32cBase64(uint32_t crc) {
  const char bytes[4] = {static_cast<char>(crc >> 24), static_cast<char>(crc >> 16),
                         static_cast<char>(crc >> 8), static_cast<char>(crc)};
  return Base64Encode(std::string_view(bytes, 4));
}

// "2026-11-22T19:07:51.123Z": RFC 3339 with milliseconds, which apitools requires.
inline std::string Rfc3339(Clock::time_point time) {
  const std::time_t seconds = Clock::to_time_t(time);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%S", &utc);
  const auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(time.time_since_epoch()).count() % 1000;
  char fraction[8];
  std::snprintf(fraction, sizeof(fraction), ".%03lldZ", static_cast<long long>(millis));
  return std::string(text) + fraction;
}

inline void Reply(httplib::Response& response, int status, const nlohmann::json& body) {
  response.status = status;
  response.set_content(body.dump(), "application/json; charset=UTF-8");
}

// Google's error document, with the domain each reason has.
inline nlohmann::json ErrorJson(int status, const std::string& reason, const std::string& message) {
  nlohmann::json error = {{"domain", reason == "rateLimitExceeded" ? "usageLimits" : "global"},
                          {"reason", reason},
                          {"message", message}};
  if (status == 401) {
    error["locationType"] = "header";
    error["location"] = "Authorization";
  }
  return {{"error", {{"code", status}, {"message", message}, {"errors", {error}}}}};
}

inline void Fail(httplib::Response& response, int status, const std::string& reason,
                 const std::string& message) {
  Reply(response, status, ErrorJson(status, reason, message));
}

// Reads and drops a body that will not be used (the connection stays usable for the next call).
inline void Drain(const httplib::ContentReader* reader) {
  if (reader != nullptr) (*reader)([](const char*, size_t) { return true; });
}

// A small body (JSON metadata), at most `limit` bytes of it.
inline std::string ReadSmallBody(const httplib::ContentReader& reader, size_t limit = 1 << 20) {
  std::string body;
  reader([&](const char* data, size_t length) {
    body.append(data, std::min(length, limit - std::min(limit, body.size())));
    return true;
  });
  return body;
}

// A query parameter as a number; nullopt if absent or not one.
inline std::optional<int64_t> IntParam(const httplib::Request& request, const char* name) {
  if (!request.has_param(name)) return std::nullopt;
  try {
    size_t used = 0;
    const std::string text = request.get_param_value(name);
    const int64_t value = std::stoll(text, &used);
    if (used != text.size()) return std::nullopt;
    return value;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace gcswire
}  // namespace det::testing
