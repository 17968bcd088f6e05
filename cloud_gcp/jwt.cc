#include "cloud_gcp/jwt.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <memory>

#include "common/base64.h"

namespace det::gcp {
namespace {

using PkeyPtr = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;
using BioPtr = std::unique_ptr<BIO, decltype(&BIO_free)>;
using MdCtxPtr = std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)>;

Result<PkeyPtr> ReadPrivateKey(const std::string& pem) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), &BIO_free);
  PkeyPtr key(bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr) : nullptr,
              &EVP_PKEY_free);
  if (!key) return InvalidArgument("private_key: not a PEM private key");
  if (EVP_PKEY_base_id(key.get()) != EVP_PKEY_RSA) {
    return InvalidArgument("private_key: not an RSA key (RS256 needs one)");
  }
  return key;
}

}  // namespace

Result<std::string> SignJwtRs256(const nlohmann::json& header, const nlohmann::json& claims,
                                 const std::string& private_key_pem) {
  DET_ASSIGN_OR_RETURN(PkeyPtr key, ReadPrivateKey(private_key_pem));
  const std::string signing_input =
      Base64UrlEncode(header.dump()) + "." + Base64UrlEncode(claims.dump());
  MdCtxPtr context(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  size_t size = 0;
  if (!context ||
      EVP_DigestSignInit(context.get(), nullptr, EVP_sha256(), nullptr, key.get()) != 1 ||
      EVP_DigestSign(context.get(), nullptr, &size, nullptr, 0) != 1) {
    return Internal("OpenSSL could not start an RS256 signature");
  }
  std::string signature(size, '\0');
  if (EVP_DigestSign(context.get(), reinterpret_cast<unsigned char*>(signature.data()), &size,
                     reinterpret_cast<const unsigned char*>(signing_input.data()),
                     signing_input.size()) != 1) {
    return Internal("OpenSSL could not sign the JWT");
  }
  signature.resize(size);
  return signing_input + "." + Base64UrlEncode(signature);
}

}  // namespace det::gcp
