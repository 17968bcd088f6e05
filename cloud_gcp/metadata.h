#pragma once

// The Compute Engine metadata server (http://metadata.google.internal/computeMetadata/v1/): the
// instance's service-account tokens, its project, zone and name. Every request carries
// `Metadata-Flavor: Google`, and answers without that header are not the metadata server's.

#include <string>

#include "common/clock.h"
#include "common/environment.h"
#include "common/http_client.h"
#include "common/status.h"

namespace det::gcp {

struct MetadataOptions {
  // GCE_METADATA_HOST (host[:port]), as Google's client libraries read it.
  std::string host = "metadata.google.internal";
  // Off Compute Engine nothing answers: this is what not being on it costs.
  Duration timeout = std::chrono::seconds(1);
};
MetadataOptions MetadataOptionsFromEnvironment(const Environment& env);

class MetadataClient {
 public:
  explicit MetadataClient(MetadataOptions options);

  // GET computeMetadata/v1/`path` ("instance/zone"). NotFound for 404; Unavailable when no
  // metadata server answers (not on Compute Engine). `timeout` zero: the options'.
  Result<std::string> Get(const std::string& path, Duration timeout = Duration::zero());
  // The project id, the zone ("us-central1-a", not its path), the instance's name.
  Result<std::string> ProjectId();
  Result<std::string> Zone();

 private:
  MetadataOptions options_;
  HttpClient http_;
};

}  // namespace det::gcp
