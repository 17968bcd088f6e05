#include "master/auth/allocation_token.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <array>

#include "master/auth/secrets.h"

namespace det::master {

std::string AllocationTokens::NewSecret() { return auth::Hex(auth::RandomBytes(64)); }

std::string AllocationTokens::Mac(const std::string& allocation_id) const {
  std::array<unsigned char, EVP_MAX_MD_SIZE> mac{};
  unsigned int size = 0;
  HMAC(EVP_sha256(), secret_.data(), static_cast<int>(secret_.size()),
       reinterpret_cast<const unsigned char*>(allocation_id.data()), allocation_id.size(),
       mac.data(), &size);
  return auth::Hex(std::string_view(reinterpret_cast<const char*>(mac.data()), size));
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
