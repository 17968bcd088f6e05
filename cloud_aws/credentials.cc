#include "cloud_aws/credentials.h"

#include <ctime>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/files.h"

namespace det::aws {
namespace {

std::string Trim(const std::string& text) {
  const size_t start = text.find_first_not_of(" \t\r");
  if (start == std::string::npos) return "";
  return text.substr(start, text.find_last_not_of(" \t\r") - start + 1);
}

std::string Home(const AwsEnvironment& env) { return env.GetOr("HOME", ""); }

std::string Profile(const AwsEnvironment& env) {
  return env.GetOr("AWS_PROFILE", env.GetOr("AWS_DEFAULT_PROFILE", "default"));
}

std::string CredentialsFile(const AwsEnvironment& env) {
  return env.GetOr("AWS_SHARED_CREDENTIALS_FILE", Home(env) + "/.aws/credentials");
}

std::string ConfigFile(const AwsEnvironment& env) {
  return env.GetOr("AWS_CONFIG_FILE", Home(env) + "/.aws/config");
}

// The profile's keys in the config file, where profiles other than default are "[profile x]".
std::optional<std::map<std::string, std::string>> ConfigProfile(const AwsEnvironment& env) {
  const std::optional<std::string> text = ReadFileText(ConfigFile(env));
  if (!text) return std::nullopt;
  const IniSections sections = ParseIni(*text);
  const std::string profile = Profile(env);
  for (const std::string& name : {"profile " + profile, profile}) {
    if (name == "default" || name.starts_with("profile ")) {
      if (auto it = sections.find(name); it != sections.end()) return it->second;
    }
  }
  return std::nullopt;
}

// Credentials from one profile section, or an error naming what is missing.
Result<std::optional<TimedCredentials>> FromSection(const std::map<std::string, std::string>& keys,
                                                    const std::string& source) {
  auto get = [&](const char* key) {
    auto it = keys.find(key);
    return it == keys.end() ? std::string() : it->second;
  };
  TimedCredentials found;
  found.credentials = {get("aws_access_key_id"), get("aws_secret_access_key"),
                       get("aws_session_token")};
  found.source = source;
  if (found.credentials.access_key_id.empty() && found.credentials.secret_access_key.empty()) {
    return std::optional<TimedCredentials>();
  }
  if (found.credentials.access_key_id.empty() || found.credentials.secret_access_key.empty()) {
    return Unauthenticated(source + " has only one of aws_access_key_id and aws_secret_access_key");
  }
  return std::optional<TimedCredentials>(std::move(found));
}

}  // namespace

IniSections ParseIni(const std::string& text) {
  IniSections sections;
  std::istringstream in(text);
  std::string line;
  std::string section;
  while (std::getline(in, line)) {
    line = Trim(line);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line.front() == '[' && line.back() == ']') {
      section = Trim(line.substr(1, line.size() - 2));
      sections[section];
      continue;
    }
    const size_t eq = line.find('=');
    if (eq == std::string::npos || section.empty()) continue;
    sections[section][Trim(line.substr(0, eq))] = Trim(line.substr(eq + 1));
  }
  return sections;
}

Result<std::optional<TimedCredentials>> CredentialsFromEnvironment(const AwsEnvironment& env) {
  const std::string id = env.GetOr("AWS_ACCESS_KEY_ID", "");
  const std::string secret = env.GetOr("AWS_SECRET_ACCESS_KEY", "");
  if (id.empty() && secret.empty()) return std::optional<TimedCredentials>();
  if (id.empty() || secret.empty()) {
    return Unauthenticated(
        "the environment sets only one of AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY");
  }
  return std::optional<TimedCredentials>(TimedCredentials{
      {id, secret, env.GetOr("AWS_SESSION_TOKEN", "")}, std::nullopt, "environment"});
}

Result<std::optional<TimedCredentials>> CredentialsFromSharedFiles(const AwsEnvironment& env) {
  const std::string profile = Profile(env);
  bool profile_found = false;
  if (std::optional<std::string> text = ReadFileText(CredentialsFile(env))) {
    const IniSections sections = ParseIni(*text);
    if (auto it = sections.find(profile); it != sections.end()) {
      profile_found = true;
      DET_ASSIGN_OR_RETURN(std::optional<TimedCredentials> found,
                           FromSection(it->second, CredentialsFile(env) + " [" + profile + "]"));
      if (found) return found;
    }
  }
  if (auto keys = ConfigProfile(env)) {
    profile_found = true;
    for (const char* unsupported : {"role_arn", "credential_process", "sso_start_url",
                                    "sso_session", "web_identity_token_file"}) {
      if (keys->contains(unsupported)) {
        return Unauthenticated("profile " + profile + " in " + ConfigFile(env) + " uses " +
                               unsupported + ", which det-autoscaler does not support: give it " +
                               "keys, or use the environment or an instance role");
      }
    }
    DET_ASSIGN_OR_RETURN(std::optional<TimedCredentials> found,
                         FromSection(*keys, ConfigFile(env) + " (profile " + profile + ")"));
    if (found) return found;
  }
  // A profile named on purpose that does not exist is an error, as for the AWS CLI.
  if (!profile_found && profile != "default") {
    return Unauthenticated("the config profile (" + profile + ") could not be found in " +
                           CredentialsFile(env) + " or " + ConfigFile(env));
  }
  return std::optional<TimedCredentials>();
}

Result<std::optional<TimedCredentials>> CredentialsFromInstanceRole(ImdsClient& imds) {
  const std::string base = "/latest/meta-data/iam/security-credentials/";
  Result<std::string> roles = imds.Get(base);
  if (!roles.ok()) {
    // Not on EC2, or on EC2 without a role: nothing here, try elsewhere.
    if (roles.status().code() == StatusCode::kUnavailable ||
        roles.status().code() == StatusCode::kDeadlineExceeded ||
        roles.status().code() == StatusCode::kNotFound) {
      return std::optional<TimedCredentials>();
    }
    return roles.status();
  }
  const std::string role = Trim(roles->substr(0, roles->find('\n')));
  if (role.empty()) return std::optional<TimedCredentials>();
  DET_ASSIGN_OR_RETURN(std::string document, imds.Get(base + role));
  const nlohmann::json json = nlohmann::json::parse(document, nullptr, false);
  if (!json.is_object() || json.value("Code", "") != "Success") {
    return Unauthenticated("instance role " + role + ": the metadata service did not return " +
                           "credentials (Code " +
                           (json.is_object() ? json.value("Code", "?") : "?") + ")");
  }
  TimedCredentials found;
  found.credentials = {json.value("AccessKeyId", ""), json.value("SecretAccessKey", ""),
                       json.value("Token", "")};
  found.source = "instance role " + role;
  if (found.credentials.access_key_id.empty() || found.credentials.secret_access_key.empty()) {
    return Unauthenticated(found.source + ": the metadata service's credentials lack a key");
  }
  if (json.contains("Expiration")) {
    DET_ASSIGN_OR_RETURN(found.expiration, ParseIso8601(json.value("Expiration", "")));
  }
  return std::optional<TimedCredentials>(std::move(found));
}

CredentialsChain::CredentialsChain(AwsEnvironment env, std::shared_ptr<ImdsClient> imds,
                                   const Clock& clock, Duration refresh_before)
    : env_(std::move(env)),
      imds_(std::move(imds)),
      clock_(clock),
      refresh_before_(refresh_before) {}

Result<TimedCredentials> CredentialsChain::Resolve() {
  DET_ASSIGN_OR_RETURN(std::optional<TimedCredentials> found, CredentialsFromEnvironment(env_));
  if (found) return *found;
  DET_ASSIGN_OR_RETURN(found, CredentialsFromSharedFiles(env_));
  if (found) return *found;
  if (imds_ != nullptr) {
    DET_ASSIGN_OR_RETURN(found, CredentialsFromInstanceRole(*imds_));
    if (found) return *found;
  }
  return Unauthenticated("no AWS credentials: looked in AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, " +
                         CredentialsFile(env_) + " and " + ConfigFile(env_) + " (profile " +
                         Profile(env_) + ") and the instance role (IMDSv2)");
}

Result<Credentials> CredentialsChain::Get() {
  std::lock_guard lock(mu_);
  const WallTime now = clock_.WallNow();
  const bool fresh =
      cached_ && (!cached_->expiration || now + refresh_before_ < *cached_->expiration);
  const bool usable = cached_ && (!cached_->expiration || now < *cached_->expiration);
  if (fresh || (usable && now < ask_again_at_)) return cached_->credentials;
  Result<TimedCredentials> resolved = Resolve();
  // IMDS hands out the same credentials until 5 minutes before they expire: a refresh that
  // fails or changes nothing keeps the old ones and is tried again 30 s later, not on every call.
  const bool unchanged =
      resolved.ok() && usable &&
      resolved->credentials.access_key_id == cached_->credentials.access_key_id &&
      resolved->expiration == cached_->expiration;
  if (!resolved.ok() || unchanged) {
    ask_again_at_ = now + std::chrono::seconds(30);
    if (usable) return cached_->credentials;
    return resolved.status();
  }
  cached_ = std::move(*resolved);
  return cached_->credentials;
}

void CredentialsChain::Invalidate() {
  std::lock_guard lock(mu_);
  cached_.reset();
  ask_again_at_ = {};
}

std::string CredentialsChain::source() const {
  std::lock_guard lock(mu_);
  return cached_ ? cached_->source : "";
}

Result<std::string> ResolveRegion(const AwsEnvironment& env, ImdsClient* imds) {
  for (const char* name : {"AWS_REGION", "AWS_DEFAULT_REGION"}) {
    if (std::string region = env.GetOr(name, ""); !region.empty()) return region;
  }
  if (auto keys = ConfigProfile(env)) {
    if (auto it = keys->find("region"); it != keys->end() && !it->second.empty()) return it->second;
  }
  if (imds != nullptr) {
    Result<std::string> document = imds->Get("/latest/dynamic/instance-identity/document");
    if (document.ok()) {
      const nlohmann::json json = nlohmann::json::parse(*document, nullptr, false);
      if (json.is_object() && json.value("region", "") != "") return json.value("region", "");
    }
  }
  return FailedPrecondition(
      "no AWS region: set `region` in the provider section, AWS_REGION, "
      "or `region` in " +
      ConfigFile(env) + " (profile " + Profile(env) +
      "); the instance identity document was not available either");
}

Result<WallTime> ParseIso8601(const std::string& text) {
  std::tm tm{};
  std::istringstream in(text);
  in >> std::get_time(&tm, "%Y-%m-%dT%H:%M:%S");
  if (in.fail()) return InvalidArgument("\"" + text + "\" is not an ISO 8601 UTC time");
  // A WallTime counts nanoseconds in 64 bits: beyond this many seconds from 1970 it overflows.
  constexpr int64_t kLimit =
      std::chrono::duration_cast<std::chrono::seconds>(WallTime::duration::max()).count();
  const time_t seconds = timegm(&tm);
  if (seconds <= -kLimit || seconds >= kLimit) {
    return InvalidArgument("\"" + text + "\" is out of range (years 1678 to 2261)");
  }
  return std::chrono::system_clock::from_time_t(seconds);
}

}  // namespace det::aws
