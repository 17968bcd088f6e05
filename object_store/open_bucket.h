#pragma once

// The client of a checkpoint bucket, as the master opens one for an experiment's
// checkpoint_storage: with the experiment's own keys when it gives them, else with the master's
// credentials (the AWS CLI's chain: environment, shared files, instance role) and region.

#include <functional>
#include <memory>
#include <string>

#include "object_store/object_store.h"

namespace det::object_store {

// The fields of checkpoint_storage a bucket is opened with (Determined's names).
struct BucketSpec {
  std::string type;  // "s3", "gcs"
  std::string bucket;
  std::string access_key;
  std::string secret_key;
  std::string endpoint_url;
};

// InvalidArgument for a type without a client here.
Result<std::unique_ptr<ObjectStore>> OpenBucket(const BucketSpec& spec);

// What opens a bucket: OpenBucket, or a test's own.
using BucketOpener = std::function<Result<std::unique_ptr<ObjectStore>>(const BucketSpec&)>;

}  // namespace det::object_store
