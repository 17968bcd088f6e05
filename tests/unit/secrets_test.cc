#include "master/auth/secrets.h"

#include <gtest/gtest.h>

#include "master/auth/users.h"

namespace det::master::auth {
namespace {

TEST(SecretsTest, Sha256MatchesTheStandardVector) {
  // FIPS 180-2, appendix B.1.
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(SecretsTest, Base64UrlHasNoPaddingAndNoUnsafeCharacters) {
  EXPECT_EQ(Base64Url(""), "");
  EXPECT_EQ(Base64Url("f"), "Zg");
  EXPECT_EQ(Base64Url("fo"), "Zm8");
  EXPECT_EQ(Base64Url("foo"), "Zm9v");
  EXPECT_EQ(Base64Url("\xfb\xff\xbf"), "-_-_");
}

TEST(SecretsTest, RandomBytesDiffer) {
  EXPECT_EQ(RandomBytes(32).size(), 32u);
  EXPECT_NE(RandomBytes(32), RandomBytes(32));
}

TEST(SecretsTest, Pbkdf2MatchesRfc7914TestVector) {
  // RFC 7914 §11: PBKDF2-HMAC-SHA256("passwd", "salt", 1, 64); the first 32 bytes.
  const std::string encoded =
      "pbkdf2_sha256$1$" + Base64Url("salt") + "$" +
      Base64Url(std::string("\x55\xac\x04\x6e\x56\xe3\x08\x9f\xec\x16\x91\xc2\x25\x44\xb6\x05"
                            "\xf9\x41\x85\x21\x6d\xde\x04\x65\xe6\x8b\x9d\x57\xc2\x0d\xac\xbc",
                            32));
  EXPECT_TRUE(VerifyPassword("passwd", encoded));
  EXPECT_FALSE(VerifyPassword("passwe", encoded));
}

TEST(SecretsTest, HashedPasswordsVerifyAndAreSalted) {
  const std::string a = HashPassword("correct horse", 1000);
  const std::string b = HashPassword("correct horse", 1000);
  EXPECT_NE(a, b);  // a fresh salt each time
  EXPECT_TRUE(a.starts_with("pbkdf2_sha256_det$1000$"));
  EXPECT_TRUE(IsDigestHash(a));
  EXPECT_TRUE(VerifyPassword("correct horse", a));
  EXPECT_TRUE(VerifyPassword("correct horse", b));
  EXPECT_FALSE(VerifyPassword("correct horsf", a));
  EXPECT_FALSE(VerifyPassword("", a));
}

// Determined's clients send SHA-512 of its public salt and the password (authentication.py's
// salt_and_hash; the vector is Python's hashlib): a stored password verifies from it too.
TEST(SecretsTest, DeterminedsDigestVerifiesAsThePasswordDoes) {
  const std::string digest =
      "2447a141acc80af004f38355177c3e93343720d9dbb20a21365b074f2a12abed"
      "5cc9b027d8d9c4f818d392b90add277818c8166fb6385b79e548a05492c2a66f";
  EXPECT_EQ(PasswordDigest("correct horse"), digest);
  EXPECT_EQ(PasswordDigest(""), "");
  EXPECT_TRUE(IsPasswordDigest(digest));
  EXPECT_FALSE(IsPasswordDigest("correct horse"));
  const std::string stored = HashPassword("correct horse", 1000);
  EXPECT_TRUE(VerifyPasswordDigest(digest, stored));
  EXPECT_FALSE(VerifyPasswordDigest(PasswordDigest("correct horsf"), stored));
  EXPECT_FALSE(VerifyPasswordDigest("correct horse", stored));
  // Stored from the digest, the password verifies.
  EXPECT_TRUE(VerifyPassword("correct horse", HashPasswordDigest(digest, 1000)));
  // The older layout (a hash of the password itself) verifies the password, never a digest.
  const std::string old =
      "pbkdf2_sha256$1$" + Base64Url("salt") + "$" + Base64Url(std::string(32, 'x'));
  EXPECT_FALSE(IsDigestHash(old));
  EXPECT_FALSE(VerifyPasswordDigest(digest, old));
}

TEST(SecretsTest, MalformedHashesMatchNothing) {
  for (const char* encoded : {"", "pbkdf2_sha256", "pbkdf2_sha256$1000$c2FsdA",
                              "md5$1000$c2FsdA$AAAA", "pbkdf2_sha256$x$c2FsdA$AAAA",
                              "pbkdf2_sha256$0$c2FsdA$AAAA", "pbkdf2_sha256$10$c2FsdA$AAAA",
                              "pbkdf2_sha256$10$c2FsdA$AAAA$extra", "pbkdf2_sha256$10$!!$AAAA"}) {
    EXPECT_FALSE(VerifyPassword("", encoded)) << encoded;
    EXPECT_FALSE(VerifyPassword("password", encoded)) << encoded;
  }
}

TEST(UserRulesTest, PasswordsNeedEightCharactersAndNamesArePlain) {
  EXPECT_TRUE(CheckPassword("12345678").ok());
  EXPECT_EQ(CheckPassword("1234567").message(), "password: a password needs at least 8 characters");
  EXPECT_FALSE(CheckPassword("").ok());
  for (const char* good : {"alice", "a", "bob.smith", "carol_1", "dave@example.com", "x-y"}) {
    EXPECT_TRUE(CheckUsername(good).ok()) << good;
  }
  for (const char* bad : {"", "-alice", "al ice", "al/ice", "al\nice", ".hidden"}) {
    EXPECT_FALSE(CheckUsername(bad).ok()) << bad;
  }
  EXPECT_FALSE(CheckUsername(std::string(65, 'a')).ok());
}

}  // namespace
}  // namespace det::master::auth
