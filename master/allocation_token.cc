#include "master/allocation_token.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <array>
#include <stdexcept>

namespace det::master {
namespace {

std::string Hex(const unsigned char* bytes, size_t size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(size * 2);
  for (size_t i = 0; i < size; ++i) {
    hex += kDigits[bytes[i] >> 4];
    hex += kDigits[bytes[i] & 0xf];
  }
  return hex;
}

}  // namespace

std::string AllocationTokens::NewSecret() {
  std::array<unsigned char, 64> bytes{};
  if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1) {
    throw std::runtime_error("OpenSSL's random generator failed");
  }
  return Hex(bytes.data(), bytes.size());
}

std::string AllocationTokens::Mac(const std::string& allocation_id) const {
  std::array<unsigned char, EVP_MAX_MD_SIZE> mac{};
  unsigned int size = 0;
  HMAC(EVP_sha256(), secret_.data(), static_cast<int>(secret_.size()),
       reinterpret_cast<const unsigned char*>(allocation_id.data()), allocation_id.size(),
       mac.data(), &size);
  return Hex(mac.data(), size);
}

std::string AllocationTokens::Issue(const std::string& allocation_id) const {
  return allocation_id + "." + Mac(allocation_id);
}

Result<std::string> AllocationTokens::Verify(const std::string& token) const {
  const size_t dot = token.rfind('.');
  if (dot == std::string::npos || dot == 0) {
    return Unauthenticated("malformed allocation token: expected <allocation id>.<signature>");
  }
  std::string allocation_id = token.substr(0, dot);
  const std::string expected = Mac(allocation_id);
  const std::string given = token.substr(dot + 1);
  if (given.size() != expected.size() ||
      CRYPTO_memcmp(given.data(), expected.data(), expected.size()) != 0) {
    return Unauthenticated("allocation token not issued by this cluster");
  }
  return allocation_id;
}

}  // namespace det::master
