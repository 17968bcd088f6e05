#pragma once

#include <string>

#include "common/status.h"

namespace det::master {

// Allocation tokens: the credentials trial code presents to the Core API.
//
// A token is "<allocation id>.<HMAC-SHA256(secret, allocation id) in hex>": whoever holds it may
// speak for that allocation and no other, and the master checks it without keeping a table (the
// secret is stored with the cluster, so tokens outlive a master restart).
class AllocationTokens {
 public:
  explicit AllocationTokens(std::string secret) : secret_(std::move(secret)) {}

  // 64 random bytes from OpenSSL's generator, in hex.
  static std::string NewSecret();

  std::string Issue(const std::string& allocation_id) const;
  // The allocation the token speaks for; Unauthenticated when it is malformed or forged.
  Result<std::string> Verify(const std::string& token) const;

 private:
  std::string Mac(const std::string& allocation_id) const;

  std::string secret_;
};

}  // namespace det::master
