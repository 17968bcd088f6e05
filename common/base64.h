#pragma once

// Base64 (RFC 4648 §4, padded) and base64url (§5, no padding), over OpenSSL's codec. Decoders
// are strict: a character outside the alphabet, misplaced padding or a bad length is an error
// that says which encoding was expected.

#include <string>
#include <string_view>

#include "common/status.h"

namespace det {

std::string Base64Encode(std::string_view bytes);
Result<std::string> Base64Decode(std::string_view text);

// URL- and file-name-safe ('-' and '_'), without '=' padding: JWTs, tokens, ids.
std::string Base64UrlEncode(std::string_view bytes);
Result<std::string> Base64UrlDecode(std::string_view text);

// base64url with its '=' padding, as Go's base64.URLEncoding: Docker's X-Registry-Auth header,
// which the engine reads as no credentials at all when it is not padded.
std::string Base64UrlEncodePadded(std::string_view bytes);
Result<std::string> Base64UrlDecodePadded(std::string_view text);

}  // namespace det
