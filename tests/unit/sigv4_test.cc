// The SigV4 signer against AWS's published test suite (../shared/testdata/aws-sig-v4-test-suite):
// every case's canonical request, string to sign and Authorization header, byte for byte.
#include "cloud_aws/sigv4.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace det::aws {
namespace {

namespace fs = std::filesystem;

// DET_SIGV4_SUITE_DIR, else shared/testdata/aws-sig-v4-test-suite beside the checkout (or beside
// one of its parents).
fs::path SuiteDir() {
  if (const char* dir = std::getenv("DET_SIGV4_SUITE_DIR")) return dir;
  const fs::path relative = fs::path("shared") / "testdata" / "aws-sig-v4-test-suite";
  for (fs::path dir = fs::absolute(DET_SOURCE_DIR_DEFAULT); dir.has_relative_path();
       dir = dir.parent_path()) {
    if (fs::exists(dir.parent_path() / relative)) return dir.parent_path() / relative;
  }
  return fs::path(DET_SOURCE_DIR_DEFAULT) / ".." / relative;
}

std::string ReadText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Parses a suite `.req` file: "METHOD PATH[?QUERY] HTTP/1.1", headers ("Name:value"; a line that
// starts with a space continues the previous header and counts as another value of it), a blank
// line, the body.
SignableRequest ParseRequest(const std::string& text) {
  SignableRequest request;
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);
  const size_t space = line.find(' ');
  request.method = line.substr(0, space);
  std::string target = line.substr(space + 1, line.rfind(" HTTP/") - space - 1);
  const size_t question = target.find('?');
  request.path = target.substr(0, question);
  if (question != std::string::npos) request.query = target.substr(question + 1);
  while (std::getline(in, line) && !line.empty()) {
    if (line[0] == ' ' || line[0] == '\t') {
      request.headers.emplace_back(request.headers.back().first, line);
      continue;
    }
    const size_t colon = line.find(':');
    request.headers.emplace_back(line.substr(0, colon), line.substr(colon + 1));
  }
  std::stringstream body;
  body << in.rdbuf();
  request.body = body.str();
  return request;
}

// Two cases of the published suite contradict themselves: their .creq signs Content-Length, but
// their .sts and .authz were computed from a canonical request without it (and, for -parameters,
// with "charset=utf8" where the request says "utf-8"). For those the canonical request is checked
// byte for byte, and the string to sign against the hash of that canonical request.
const std::set<std::string> kSelfContradictoryCases = {"post-x-www-form-urlencoded",
                                                       "post-x-www-form-urlencoded-parameters"};

const Credentials kSuiteCredentials{"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", ""};
const SigningScope kSuiteScope{"us-east-1", "service"};

std::vector<fs::path> SuiteCases() {
  std::vector<fs::path> cases;
  std::error_code ec;
  for (const auto& entry : fs::recursive_directory_iterator(SuiteDir(), ec)) {
    if (entry.path().extension() == ".req") cases.push_back(entry.path());
  }
  std::sort(cases.begin(), cases.end());
  return cases;
}

TEST(SigV4Test, PassesEveryCaseOfTheSuiteByteForByte) {
  const std::vector<fs::path> cases = SuiteCases();
  // 22 top-level cases, 7 path-normalisation cases and 2 session-token cases.
  ASSERT_EQ(cases.size(), 31u) << "the suite is expected at " << SuiteDir()
                               << " (set DET_SIGV4_SUITE_DIR to move it)";
  for (const fs::path& req : cases) {
    SCOPED_TRACE(req.stem().string());
    const SignableRequest request = ParseRequest(ReadText(req));
    const Signature signature = ComputeSignature(request, kSuiteCredentials, kSuiteScope);
    fs::path base = req;
    const std::string creq = ReadText(base.replace_extension(".creq"));
    const std::string sts = ReadText(base.replace_extension(".sts"));
    EXPECT_EQ(signature.canonical_request, creq);
    if (kSelfContradictoryCases.contains(req.stem().string())) {
      // The suite's string to sign is not the hash of its own canonical request, so no signer can
      // match both; ours is the hash of the suite's canonical request, as the spec defines it.
      EXPECT_NE(sts.substr(sts.rfind('\n') + 1), Sha256Hex(creq)) << "the suite was fixed";
      EXPECT_EQ(signature.string_to_sign.substr(signature.string_to_sign.rfind('\n') + 1),
                Sha256Hex(creq));
      continue;
    }
    EXPECT_EQ(signature.string_to_sign, sts);
    EXPECT_EQ(signature.authorization, ReadText(base.replace_extension(".authz")));
  }
}

TEST(SigV4Test, TheFormCasesSignedAsTheirSignedRequestsShowThem) {
  // post-x-www-form-urlencoded's .sreq (and its .sts and .authz) sign no Content-Length.
  const fs::path dir = SuiteDir() / "post-x-www-form-urlencoded";
  std::string text = ReadText(dir / "post-x-www-form-urlencoded.sreq");
  text.erase(text.find("Authorization:"),
             text.find('\n', text.find("Authorization:")) - text.find("Authorization:") + 1);
  const Signature signature = ComputeSignature(ParseRequest(text), kSuiteCredentials, kSuiteScope);
  EXPECT_EQ(signature.string_to_sign, ReadText(dir / "post-x-www-form-urlencoded.sts"));
  EXPECT_EQ(signature.authorization, ReadText(dir / "post-x-www-form-urlencoded.authz"));
}

TEST(SigV4Test, SignRequestAddsDateTokenAndAuthorizationAsTheSuiteDoes) {
  const fs::path dir = SuiteDir() / "post-sts-token" / "post-sts-header-before";
  SignableRequest request = ParseRequest(ReadText(dir / "post-sts-header-before.req"));
  const std::string token = request.Header("X-Amz-Security-Token");
  ASSERT_FALSE(token.empty());
  std::erase_if(request.headers, [](const auto& h) { return h.first != "Host"; });
  Credentials credentials = kSuiteCredentials;
  credentials.session_token = token;
  const WallTime when = std::chrono::system_clock::from_time_t(1440938160);  // 20150830T123600Z
  SignRequest(&request, credentials, kSuiteScope, when);
  EXPECT_EQ(request.Header("X-Amz-Date"), "20150830T123600Z");
  EXPECT_EQ(request.Header("Authorization"), ReadText(dir / "post-sts-header-before.authz"));
  // Signing again replaces the old signature instead of adding a second one.
  SignRequest(&request, credentials, kSuiteScope, when);
  EXPECT_EQ(request.headers.size(), 4u);
}

TEST(SigV4Test, EncodesLikeRfc3986) {
  EXPECT_EQ(UriEncode("a b/c~*", false), "a%20b%2Fc~%2A");
  EXPECT_EQ(UriEncode("a b/c", true), "a%20b/c");
  EXPECT_EQ(UriDecode("a%20b%2"), "a b%2");
  EXPECT_EQ(AmzDate(std::chrono::system_clock::from_time_t(0)), "19700101T000000Z");
}

}  // namespace
}  // namespace det::aws
