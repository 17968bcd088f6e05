#include "cloud_gcp/metadata.h"

namespace det::gcp {

MetadataOptions MetadataOptionsFromEnvironment(const Environment& env) {
  MetadataOptions options;
  options.host = env.GetOr("GCE_METADATA_HOST", env.GetOr("GCE_METADATA_IP", options.host));
  return options;
}

MetadataClient::MetadataClient(MetadataOptions options) : options_(std::move(options)) {}

Result<std::string> MetadataClient::Get(const std::string& path, Duration timeout) {
  HttpRequest request;
  request.url = "http://" + options_.host + "/computeMetadata/v1/" + path;
  request.headers = {{"Metadata-Flavor", "Google"}};
  request.timeout = timeout == Duration::zero() ? options_.timeout : timeout;
  request.connect_timeout = options_.timeout;
  Result<HttpResponse> response = http_.Send(request);
  if (!response.ok()) {
    return Unavailable("the metadata server (" + options_.host +
                       ") does not answer: not on Compute Engine? " + response.status().message());
  }
  auto flavor = response->headers.find("metadata-flavor");
  if (flavor == response->headers.end() || flavor->second != "Google") {
    return Unavailable("http://" + options_.host + " is not a Compute Engine metadata server");
  }
  if (response->status == 404) return NotFound("metadata " + path + ": not found");
  if (response->status != 200) {
    return Unavailable("metadata " + path + ": HTTP " + std::to_string(response->status));
  }
  return std::move(response->body);
}

Result<std::string> MetadataClient::ProjectId() { return Get("project/project-id"); }

Result<std::string> MetadataClient::Zone() {
  DET_ASSIGN_OR_RETURN(std::string zone, Get("instance/zone"));  // projects/123/zones/us-east1-b
  const size_t slash = zone.rfind('/');
  return slash == std::string::npos ? zone : zone.substr(slash + 1);
}

}  // namespace det::gcp
