#pragma once

// JSON Web Tokens signed with RS256 (RFC 7515/7519): what a service account signs to get an
// access token from Google's OAuth 2.0 token endpoint.

#include <nlohmann/json.hpp>
#include <string>

#include "common/status.h"

namespace det::gcp {

// "<base64url header>.<base64url claims>.<base64url RSASSA-PKCS1-v1_5 SHA-256 signature>".
// `private_key_pem` is a PEM RSA key (PKCS#8 "BEGIN PRIVATE KEY", as service account keys hold,
// or PKCS#1). Fails with InvalidArgument when the key cannot be read or is not RSA.
Result<std::string> SignJwtRs256(const nlohmann::json& header, const nlohmann::json& claims,
                                 const std::string& private_key_pem);

}  // namespace det::gcp
