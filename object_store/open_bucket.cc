#include "object_store/open_bucket.h"

#include <cstdlib>

#include "cloud_aws/credentials.h"
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

}  // namespace

Result<std::unique_ptr<ObjectStore>> OpenBucket(const BucketSpec& spec) {
  if (spec.type == "s3") return OpenS3(spec);
  return InvalidArgument("no client for checkpoint storage type \"" + spec.type + "\"");
}

}  // namespace det::object_store
