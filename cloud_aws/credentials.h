#pragma once

// Where AWS credentials and the region come from, in the order the AWS CLI looks:
//   1. the environment: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN;
//   2. the shared credentials file (AWS_SHARED_CREDENTIALS_FILE, ~/.aws/credentials), then the
//      config file (AWS_CONFIG_FILE, ~/.aws/config), for profile AWS_PROFILE (else "default");
//   3. the instance role, from IMDSv2, refreshed before it expires.
// The region: AWS_REGION, AWS_DEFAULT_REGION, the profile's `region`, then the instance identity
// document's.

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "cloud_aws/imds.h"
#include "cloud_aws/sigv4.h"
#include "common/clock.h"
#include "common/environment.h"
#include "common/status.h"

namespace det::aws {

using AwsEnvironment = Environment;  // common/environment.h

// Credentials and, for temporary ones, when they stop working.
struct TimedCredentials {
  Credentials credentials;
  std::optional<WallTime> expiration;
  std::string source;  // "environment", "shared credentials file (profile x)", "instance role y"
};

// An INI file as the AWS CLI writes them: "[section]" then "key = value" lines.
using IniSections = std::map<std::string, std::map<std::string, std::string>>;
IniSections ParseIni(const std::string& text);

// Each step of the chain: nullopt when the source has nothing (so the next is tried), an error
// when it has something broken (a profile without a secret key, an unreadable role).
Result<std::optional<TimedCredentials>> CredentialsFromEnvironment(const AwsEnvironment& env);
Result<std::optional<TimedCredentials>> CredentialsFromSharedFiles(const AwsEnvironment& env);
Result<std::optional<TimedCredentials>> CredentialsFromInstanceRole(ImdsClient& imds);

// The whole chain, caching what it found. Credentials that expire are fetched again once less
// than `refresh_before` is left (the AWS CLI refreshes instance-role credentials 10 minutes
// early, and IMDS hands out new ones 5 minutes before expiry at the latest); a refresh that fails
// or brings the same credentials keeps the old ones (while valid) and is tried again 30 s later.
// Thread-safe: Get() may be called from any thread.
class CredentialsChain {
 public:
  CredentialsChain(AwsEnvironment env, std::shared_ptr<ImdsClient> imds, const Clock& clock,
                   Duration refresh_before = std::chrono::minutes(10));
  // Unauthenticated naming every place looked when there are none.
  Result<Credentials> Get();
  // Forgets the cached credentials, so that the next Get looks again from the start of the chain
  // (for a call refused with ExpiredToken: the role's credentials changed before they said).
  void Invalidate();
  // Where the current credentials came from ("" before the first Get).
  std::string source() const;

 private:
  Result<TimedCredentials> Resolve();

  AwsEnvironment env_;
  std::shared_ptr<ImdsClient> imds_;
  const Clock& clock_;
  Duration refresh_before_;
  mutable std::mutex mu_;
  std::optional<TimedCredentials> cached_;
  WallTime ask_again_at_{};  // after a refresh that failed or changed nothing
};

// The region (see the top of this file); FailedPrecondition naming every place looked if none.
Result<std::string> ResolveRegion(const AwsEnvironment& env, ImdsClient* imds);

// "2026-11-22T19:07:51Z" (IMDS's Expiration, EC2's launchTime) as a time point; InvalidArgument
// for anything else, and for times a WallTime cannot hold (before 1678, after 2261).
Result<WallTime> ParseIso8601(const std::string& text);

}  // namespace det::aws
