#pragma once

// Amazon S3's REST API (https://docs.aws.amazon.com/AmazonS3/latest/API/) for what the master does
// with checkpoints: list a prefix (ListObjectsV2, every page) and delete keys (DeleteObjects, 1000
// a request), plus small PutObject/GetObject. Requests are signed with SigV4 (cloud_aws/sigv4.h);
// S3's error documents are read and classified (common/cloud_error.h). It retries as the SDKs'
// standard mode does (throttling and 5xx, full-jitter backoff), retries only the keys a
// DeleteObjects left, follows a bucket's region when S3 names another
// (AuthorizationHeaderMalformed, PermanentRedirect, x-amz-bucket-region), and asks its credentials
// again after ExpiredToken.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cloud_aws/credentials.h"
#include "common/clock.h"
#include "common/http_client.h"
#include "common/retry.h"
#include "object_store/object_store.h"

namespace det::object_store {

CloudErrorKind ClassifyS3Error(const std::string& code, long http_status);

struct S3ClientOptions {
  std::string bucket;
  std::string region = "us-east-1";  // where the bucket is first looked for
  // "" for AWS (https://BUCKET.s3.REGION.amazonaws.com); else an S3-compatible endpoint
  // ("http://minio:9000"), addressed path-style unless `addressing_style` says "virtual".
  std::string endpoint_url;
  std::string addressing_style = "auto";  // auto | path | virtual
  RetryPolicy retry{5, std::chrono::milliseconds(200), std::chrono::seconds(20)};
  Duration timeout = std::chrono::seconds(60);
};

// S3's answer to one ListObjectsV2 call, parsed (exposed for the fuzzer and tests).
ObjectResult<ListPage> ReadListObjectsV2(const std::string& body);
// The keys a DeleteObjects answer says were not deleted: (key, code, message).
struct S3KeyError {
  std::string key;
  std::string code;
  std::string message;
};
ObjectResult<std::vector<S3KeyError>> ReadDeleteResult(const std::string& body);
// An S3 error answer (HEAD's has no body: the status alone).
ObjectStoreError ReadS3Error(const std::string& op, long http_status, const std::string& body,
                             const std::map<std::string, std::string>& headers);

class S3Client : public ObjectStore {
 public:
  // `clock` signs the calls and waits between attempts (a test's SimulatedClock records the waits).
  S3Client(S3ClientOptions options, std::shared_ptr<aws::CredentialsChain> credentials,
           const Clock& clock);

  ObjectResult<std::vector<ObjectInfo>> List(const std::string& prefix) override;
  ObjectResult<size_t> Delete(const std::vector<std::string>& keys) override;
  // GetObject with a Range header.
  ObjectResult<std::string> ReadRange(const std::string& key, uint64_t offset,
                                      uint64_t length) override;
  const std::string& bucket() const override { return options_.bucket; }

  ObjectResult<bool> Put(const std::string& key, const std::string& body);
  // The object's bytes; kNotFound when there is none.
  ObjectResult<std::string> Get(const std::string& key);
  // The region the client now signs for (after any redirect).
  const std::string& region() const { return region_; }

 private:
  struct Call {
    std::string op;
    std::string method;
    std::string key;    // "" for calls on the bucket
    std::string query;  // without "?", already encoded
    std::string body;
    std::vector<std::pair<std::string, std::string>> headers;
  };
  // One call, retried as the class comment says; the 2xx response or the error.
  ObjectResult<HttpResponse> Send(const Call& call);
  ObjectResult<HttpResponse> Attempt(const Call& call);
  // The keys of one DeleteObjects request (at most 1000) that were not deleted.
  ObjectResult<std::vector<S3KeyError>> DeleteBatch(const std::vector<std::string>& keys);
  bool VirtualHost() const;

  S3ClientOptions options_;
  std::shared_ptr<aws::CredentialsChain> credentials_;
  const Clock& clock_;
  std::string region_;
  HttpClient http_;
};

}  // namespace det::object_store
