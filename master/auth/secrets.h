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

// Determined's clients never send a password: they send its digest, SHA-512 (hex) of a public salt
// and the password ("" for ""), with `isHashed: true`. Passwords are stored as a PBKDF2 hash of
// that digest, so that a login with the password and one with its digest both verify.
std::string PasswordDigest(std::string_view password);
// Whether `text` looks like a digest (128 lowercase hex digits).
bool IsPasswordDigest(std::string_view text);

// "pbkdf2_sha256_det$<iterations>$<salt, base64url>$<hash, base64url>" (Django's layout) of
// PasswordDigest(password): a random 16-byte salt and a 32-byte derived key.
std::string HashPassword(std::string_view password, int iterations = kPasswordIterations);
// The same from the digest a Determined client sent.
std::string HashPasswordDigest(std::string_view digest, int iterations = kPasswordIterations);
// Whether `encoded` is of that layout; the older "pbkdf2_sha256$..." (a hash of the password
// itself) verifies only plain passwords, and a login replaces it.
bool IsDigestHash(std::string_view encoded);

// Whether `password` (or the `digest` a Determined client sent) matches `encoded`, compared in
// constant time. A malformed `encoded` (an empty hash: no password set) matches nothing.
bool VerifyPassword(std::string_view password, std::string_view encoded);
bool VerifyPasswordDigest(std::string_view digest, std::string_view encoded);
// Whether PBKDF2 of `secret` matches `encoded` of layout `scheme`.
bool VerifyHash(std::string_view secret, std::string_view encoded, std::string_view scheme);

}  // namespace det::master::auth
