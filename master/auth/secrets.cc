#include "master/auth/secrets.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <array>
#include <charconv>
#include <stdexcept>
#include <vector>

#include "common/base64.h"

namespace det::master::auth {
namespace {

// Hashes of Determined's password digest (PasswordDigest), and of the password itself (the layout
// before Determined's clients were served; verified for plain logins, replaced at the next one).
constexpr std::string_view kScheme = "pbkdf2_sha256_det";
constexpr std::string_view kPlainScheme = "pbkdf2_sha256";
// Determined's client-side salt (common/api/authentication.py): public, the same for every user.
constexpr std::string_view kDeterminedSalt = "GubPEmmotfiK9TMD6Zdw";
constexpr size_t kSaltBytes = 16;
constexpr size_t kKeyBytes = 32;

std::string Pbkdf2(std::string_view password, std::string_view salt, int iterations) {
  std::string key(kKeyBytes, '\0');
  if (PKCS5_PBKDF2_HMAC(password.data(), static_cast<int>(password.size()),
                        reinterpret_cast<const unsigned char*>(salt.data()),
                        static_cast<int>(salt.size()), iterations, EVP_sha256(),
                        static_cast<int>(key.size()),
                        reinterpret_cast<unsigned char*>(key.data())) != 1) {
    throw std::runtime_error("OpenSSL's PBKDF2 failed");
  }
  return key;
}

// Splits "a$b$c$d" into exactly four parts.
bool SplitFour(std::string_view text, std::array<std::string_view, 4>* parts) {
  for (size_t i = 0; i < 3; ++i) {
    const size_t at = text.find('$');
    if (at == std::string_view::npos) return false;
    (*parts)[i] = text.substr(0, at);
    text.remove_prefix(at + 1);
  }
  (*parts)[3] = text;
  return text.find('$') == std::string_view::npos;
}

}  // namespace

std::string RandomBytes(size_t size) {
  std::string bytes(size, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(bytes.data()), static_cast<int>(size)) != 1) {
    throw std::runtime_error("OpenSSL's random generator failed");
  }
  return bytes;
}

std::string Hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(bytes.size() * 2);
  for (unsigned char b : bytes) {
    hex += kDigits[b >> 4];
    hex += kDigits[b & 0xf];
  }
  return hex;
}

std::string Base64Url(std::string_view bytes) { return Base64UrlEncode(bytes); }

std::string Sha256Hex(std::string_view text) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int size = 0;
  if (EVP_Digest(text.data(), text.size(), digest.data(), &size, EVP_sha256(), nullptr) != 1) {
    throw std::runtime_error("OpenSSL's SHA-256 failed");
  }
  return Hex(std::string_view(reinterpret_cast<const char*>(digest.data()), size));
}

std::string PasswordDigest(std::string_view password) {
  if (password.empty()) return "";
  const std::string salted = std::string(kDeterminedSalt) + std::string(password);
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int size = 0;
  if (EVP_Digest(salted.data(), salted.size(), digest.data(), &size, EVP_sha512(), nullptr) != 1) {
    throw std::runtime_error("OpenSSL's SHA-512 failed");
  }
  return Hex(std::string_view(reinterpret_cast<const char*>(digest.data()), size));
}

bool IsPasswordDigest(std::string_view text) {
  if (text.size() != 128) return false;
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

std::string HashPassword(std::string_view password, int iterations) {
  return HashPasswordDigest(PasswordDigest(password), iterations);
}

std::string HashPasswordDigest(std::string_view digest, int iterations) {
  const std::string salt = RandomBytes(kSaltBytes);
  return std::string(kScheme) + "$" + std::to_string(iterations) + "$" + Base64Url(salt) + "$" +
         Base64Url(Pbkdf2(digest, salt, iterations));
}

bool IsDigestHash(std::string_view encoded) {
  return encoded.starts_with(std::string(kScheme) + "$");
}

bool VerifyPassword(std::string_view password, std::string_view encoded) {
  if (IsDigestHash(encoded)) return VerifyHash(PasswordDigest(password), encoded, kScheme);
  return VerifyHash(password, encoded, kPlainScheme);
}

bool VerifyPasswordDigest(std::string_view digest, std::string_view encoded) {
  return IsDigestHash(encoded) && VerifyHash(digest, encoded, kScheme);
}

bool VerifyHash(std::string_view secret, std::string_view encoded, std::string_view scheme) {
  std::array<std::string_view, 4> parts;
  if (!SplitFour(encoded, &parts) || parts[0] != scheme) return false;
  int iterations = 0;
  const auto [end, error] =
      std::from_chars(parts[1].data(), parts[1].data() + parts[1].size(), iterations);
  if (error != std::errc() || end != parts[1].data() + parts[1].size() || iterations < 1) {
    return false;
  }
  Result<std::string> salt = Base64UrlDecode(parts[2]);
  Result<std::string> expected = Base64UrlDecode(parts[3]);
  if (!salt.ok() || !expected.ok() || expected->size() != kKeyBytes) return false;
  const std::string actual = Pbkdf2(secret, *salt, iterations);
  return CRYPTO_memcmp(actual.data(), expected->data(), kKeyBytes) == 0;
}

}  // namespace det::master::auth
