#include "cloud_aws/imds.h"

#include <string_view>

namespace det::aws {
namespace {

constexpr int kTokenTtlSeconds = 21600;  // six hours, the longest IMDSv2 grants

}  // namespace

ImdsOptions ImdsOptionsFromEnvironment(const char* (*getenv)(const char*)) {
  ImdsOptions options;
  if (const char* endpoint = getenv("AWS_EC2_METADATA_SERVICE_ENDPOINT"); endpoint && *endpoint) {
    options.endpoint = endpoint;
  }
  while (options.endpoint.ends_with('/')) options.endpoint.pop_back();
  if (const char* disabled = getenv("AWS_EC2_METADATA_DISABLED")) {
    options.disabled = std::string_view(disabled) == "true";
  }
  return options;
}

ImdsClient::ImdsClient(ImdsOptions options, const Clock& clock)
    : options_(std::move(options)), clock_(clock) {}

Status ImdsClient::RefreshToken() {
  HttpRequest request;
  request.method = "PUT";
  request.url = options_.endpoint + "/latest/api/token";
  request.headers = {{"X-aws-ec2-metadata-token-ttl-seconds", std::to_string(kTokenTtlSeconds)}};
  request.timeout = request.connect_timeout = options_.timeout;
  DET_ASSIGN_OR_RETURN(HttpResponse response, http_.Send(request));
  if (response.status != 200 || response.body.empty()) {
    return Unavailable("the instance metadata service refused a session token (HTTP " +
                       std::to_string(response.status) + ")");
  }
  token_ = response.body;
  // Renewed a minute early, so that a token never expires between check and use.
  token_expires_ = clock_.Now() + std::chrono::seconds(kTokenTtlSeconds - 60);
  return Status::Ok();
}

Result<std::string> ImdsClient::Get(const std::string& path) {
  if (options_.disabled) return Unavailable("the instance metadata service is disabled");
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (token_.empty() || clock_.Now() >= token_expires_) DET_RETURN_IF_ERROR(RefreshToken());
    HttpRequest request;
    request.url = options_.endpoint + path;
    request.headers = {{"X-aws-ec2-metadata-token", token_}};
    request.timeout = request.connect_timeout = options_.timeout;
    DET_ASSIGN_OR_RETURN(HttpResponse response, http_.Send(request));
    if (response.status == 200) return response.body;
    if (response.status == 401) {
      token_.clear();
      continue;
    }
    if (response.status == 404) return NotFound("instance metadata " + path + " does not exist");
    return Unavailable("instance metadata " + path + ": HTTP " + std::to_string(response.status));
  }
  return Unauthenticated("the instance metadata service refused a fresh session token");
}

}  // namespace det::aws
