#include "object_store/open_bucket.h"

#include <cstdlib>

#include "cloud_aws/credentials.h"
#include "cloud_gcp/credentials.h"
#include "object_store/gcs_client.h"
#include "object_store/s3_client.h"

namespace det::object_store {
namespace {

std::unique_ptr<ObjectStore> OpenS3(const BucketSpec& spec) {
  const Clock& clock = RealClock::Instance();
  auto imds = std::make_shared<aws::ImdsClient>(
      aws::ImdsOptionsFromEnvironment(
          [](const char* name) -> const char* { return std::getenv(name); }),
      clock);
  aws::AwsEnvironment env = aws::AwsEnvironment::Process();
  if (!spec.access_key.empty()) {
    // The experiment's own keys, and nothing else of the master's.
    env = aws::AwsEnvironment::Of(
        {{"AWS_ACCESS_KEY_ID", spec.access_key}, {"AWS_SECRET_ACCESS_KEY", spec.secret_key}});
  }
  S3ClientOptions options;
  options.bucket = spec.bucket;
  options.endpoint_url = spec.endpoint_url;
  // Where to look first; S3 names the bucket's region if it is another, and the client follows.
  Result<std::string> region = aws::ResolveRegion(aws::AwsEnvironment::Process(), nullptr);
  if (region.ok()) options.region = *region;
  if (const char* style = std::getenv("DET_S3_ADDRESSING_STYLE"); style != nullptr) {
    options.addressing_style = style;
  }
  auto credentials =
      std::make_shared<aws::CredentialsChain>(env, spec.access_key.empty() ? imds : nullptr, clock);
  return std::make_unique<S3Client>(options, std::move(credentials), clock);
}

// The master's Application Default Credentials (key file, gcloud's ADC, the metadata server).
// With STORAGE_EMULATOR_HOST (an emulator, the tests' fake) calls go there, anonymous when no
// credentials are found (a broken key file is still an error), as Google's client libraries do.
Result<std::unique_ptr<ObjectStore>> OpenGcs(const BucketSpec& spec) {
  const Clock& clock = RealClock::Instance();
  const Environment env = Environment::Process();
  const std::string emulator = env.GetOr("STORAGE_EMULATOR_HOST", "");
  auto metadata = std::make_shared<gcp::MetadataClient>(gcp::MetadataOptionsFromEnvironment(env));
  Result<std::unique_ptr<gcp::TokenSource>> source =
      gcp::ResolveTokenSource(env, std::move(metadata), clock);
  std::shared_ptr<gcp::GcpCredentials> credentials;
  if (source.ok()) {
    credentials = std::make_shared<gcp::GcpCredentials>(std::move(*source), clock);
  } else if (emulator.empty() || source.status().code() != StatusCode::kUnauthenticated) {
    return Status(source.status().code(), "no Google credentials for gs://" + spec.bucket + ": " +
                                              source.status().message());
  }
  GcsClientOptions options;
  options.bucket = spec.bucket;
  options.endpoint_url = GcsEndpointFor(emulator);
  std::unique_ptr<ObjectStore> client =
      std::make_unique<GcsClient>(std::move(options), std::move(credentials), clock);
  return client;
}

}  // namespace

Result<std::unique_ptr<ObjectStore>> OpenBucket(const BucketSpec& spec) {
  if (spec.type == "s3") return OpenS3(spec);
  if (spec.type == "gcs") return OpenGcs(spec);
  return InvalidArgument("no client for checkpoint storage type \"" + spec.type + "\"");
}

}  // namespace det::object_store
