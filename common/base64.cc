#include "common/base64.h"

#include <openssl/evp.h>

#include <cctype>

namespace det {
namespace {

bool IsBase64Char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '+' || c == '/';
}

}  // namespace

std::string Base64Encode(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');  // + the NUL OpenSSL writes
  const int size = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                   reinterpret_cast<const unsigned char*>(bytes.data()),
                                   static_cast<int>(bytes.size()));
  out.resize(static_cast<size_t>(size));
  return out;
}

Result<std::string> Base64Decode(std::string_view text) {
  auto invalid = [] { return InvalidArgument("expected base64 (RFC 4648, padded)"); };
  if (text.size() % 4 != 0) return invalid();
  const size_t data_end = text.find_last_not_of('=') + 1;  // npos + 1 == 0: all padding
  if (text.size() - data_end > 2) return invalid();
  for (size_t i = 0; i < data_end; ++i) {
    if (!IsBase64Char(text[i])) return invalid();
  }
  std::string out(text.size() / 4 * 3 + 1, '\0');
  const int decoded = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                      reinterpret_cast<const unsigned char*>(text.data()),
                                      static_cast<int>(text.size()));
  if (decoded < 0) return invalid();
  // EVP_DecodeBlock counts the padding as zero bytes.
  out.resize(static_cast<size_t>(decoded) - (text.size() - data_end));
  return out;
}

std::string Base64UrlEncodePadded(std::string_view bytes) {
  std::string out = Base64Encode(bytes);
  for (char& c : out) {
    if (c == '+') c = '-';
    if (c == '/') c = '_';
  }
  return out;
}

std::string Base64UrlEncode(std::string_view bytes) {
  std::string out = Base64UrlEncodePadded(bytes);
  while (!out.empty() && out.back() == '=') out.pop_back();
  return out;
}

namespace {

// `text` in the base64url alphabet, written in base64's ('-' → '+', '_' → '/'); an error when it
// has a character of base64's own, or a '=' where `padded` says there is none.
Result<std::string> ToStandardAlphabet(std::string_view text, bool padded) {
  const auto invalid = [padded] {
    return InvalidArgument(padded ? "expected padded base64url (RFC 4648 §5)"
                                  : "expected base64url (RFC 4648 §5)");
  };
  std::string standard(text);
  for (char& c : standard) {
    if (c == '+' || c == '/' || (c == '=' && !padded)) return invalid();
    if (c == '-') c = '+';
    if (c == '_') c = '/';
  }
  if (padded && standard.size() % 4 != 0) return invalid();
  if (standard.size() % 4 == 1) return invalid();
  while (standard.size() % 4 != 0) standard += '=';
  Result<std::string> decoded = Base64Decode(standard);
  if (!decoded.ok()) return invalid();
  return decoded;
}

}  // namespace

Result<std::string> Base64UrlDecode(std::string_view text) {
  return ToStandardAlphabet(text, false);
}

Result<std::string> Base64UrlDecodePadded(std::string_view text) {
  return ToStandardAlphabet(text, true);
}

}  // namespace det
