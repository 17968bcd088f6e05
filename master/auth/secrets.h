#pragma once

// The cryptography users and tokens rest on, all from OpenSSL: random secrets, SHA-256 digests and
// password hashing.

#include <string>
#include <string_view>

namespace det::master::auth {

// PBKDF2-HMAC-SHA256 work factor: OWASP's recommendation (2023) for this hash.
inline constexpr int kPasswordIterations = 600000;

// `size` bytes from OpenSSL's generator (throws std::runtime_error if it fails, which it does not
// on a working system).
std::string RandomBytes(size_t size);
std::string Hex(std::string_view bytes);
// Base64url without padding (RFC 4648 §5): safe in headers, URLs and file names.
std::string Base64Url(std::string_view bytes);
// SHA-256 of `text`, in hex: how tokens are stored (a leaked table gives no usable token).
std::string Sha256Hex(std::string_view text);

// "pbkdf2_sha256$<iterations>$<salt, base64url>$<hash, base64url>" (Django's layout): a random
// 16-byte salt and a 32-byte derived key.
std::string HashPassword(std::string_view password, int iterations = kPasswordIterations);
// Whether `password` matches `encoded` (from HashPassword), compared in constant time. A
// malformed `encoded` (an empty hash: no password set) matches nothing.
bool VerifyPassword(std::string_view password, std::string_view encoded);

}  // namespace det::master::auth
