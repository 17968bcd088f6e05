#pragma once

// The EC2 instance metadata service, version 2 (IMDSv2): a session token from PUT
// /latest/api/token, then GETs that carry it. Used for instance-role credentials, the region and
// the instance id.

#include <string>

#include "common/clock.h"
#include "common/http_client.h"
#include "common/status.h"

namespace det::aws {

struct ImdsOptions {
  // AWS_EC2_METADATA_SERVICE_ENDPOINT, as the AWS CLI reads it; a path after the host is kept,
  // which lets a test serve several instances' metadata from one fake.
  std::string endpoint = "http://169.254.169.254";
  bool disabled = false;  // AWS_EC2_METADATA_DISABLED=true
  // The AWS CLI's defaults: one attempt, one second. Off EC2 nothing answers, so this is what
  // not being on EC2 costs.
  Duration timeout = std::chrono::seconds(1);
};

// Reads the options from the process's environment (or `getenv` in tests).
ImdsOptions ImdsOptionsFromEnvironment(const char* (*getenv)(const char*));

class ImdsClient {
 public:
  ImdsClient(ImdsOptions options, const Clock& clock);

  // GET `path` ("/latest/meta-data/instance-id"). NotFound for 404; Unavailable when the service
  // does not answer (not on EC2) or is disabled. A token the service no longer accepts (401) is
  // replaced once.
  Result<std::string> Get(const std::string& path);

 private:
  Status RefreshToken();

  ImdsOptions options_;
  const Clock& clock_;
  HttpClient http_;
  std::string token_;
  MonoTime token_expires_{};
};

}  // namespace det::aws
