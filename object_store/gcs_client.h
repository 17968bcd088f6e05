#pragma once

// Google Cloud Storage's JSON API (https://cloud.google.com/storage/docs/json_api/v1) for what the
// master does with checkpoints: list a prefix (objects.list, every page) and delete objects
// (objects.delete, one call each: the JSON API has no multi-object delete outside its batch
// endpoint), plus small uploads and downloads. Calls carry an OAuth 2.0 token from the
// credentials (cloud_gcp/credentials.h: key file, ADC, metadata server); a 401 asks for a new
// token once. 429, 408, 5xx and transport failures are retried with full-jitter backoff; errors
// are Google's error documents, classified (common/cloud_error.h). Not thread-safe.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cloud_gcp/credentials.h"
#include "common/clock.h"
#include "common/http_client.h"
#include "common/retry.h"
#include "object_store/object_store.h"

namespace det::object_store {

CloudErrorKind ClassifyGcsError(const std::string& reason, long http_status);

// The API's root for STORAGE_EMULATOR_HOST's value ("host:port" or a URL), as Google's client
// libraries read it; "https://storage.googleapis.com" when it is empty.
std::string GcsEndpointFor(const std::string& emulator_host);

struct GcsClientOptions {
  std::string bucket;
  std::string endpoint_url = "https://storage.googleapis.com";  // the root: no /storage/v1
  size_t page_size = 1000;  // objects.list maxResults (the API's maximum)
  RetryPolicy retry{5, std::chrono::milliseconds(250), std::chrono::seconds(20)};
  Duration timeout = std::chrono::seconds(60);
};

// One objects.list answer, parsed (exposed for the fuzzer and tests).
ObjectResult<ListPage> ReadGcsListPage(const std::string& body);
// A Google error document ({"error": {"code", "message", "errors": [{"reason"}]}}), or the
// status alone when the body is not one.
ObjectStoreError ReadGcsError(const std::string& op, long http_status, const std::string& body);

class GcsClient : public ObjectStore {
 public:
  // `credentials` null: calls carry no token (an emulator that takes anonymous calls). `clock`
  // waits between attempts (a test's SimulatedClock records the waits).
  GcsClient(GcsClientOptions options, std::shared_ptr<gcp::GcpCredentials> credentials,
            const Clock& clock);

  ObjectResult<std::vector<ObjectInfo>> List(const std::string& prefix) override;
  ObjectResult<size_t> Delete(const std::vector<std::string>& keys) override;
  // objects.get (alt=media) with a Range header.
  ObjectResult<std::string> ReadRange(const std::string& key, uint64_t offset,
                                      uint64_t length) override;
  const std::string& bucket() const override { return options_.bucket; }

  ObjectResult<bool> Put(const std::string& key, const std::string& body);
  // The object's bytes; kNotFound when there is none.
  ObjectResult<std::string> Get(const std::string& key);

 private:
  struct Call {
    std::string op;      // "objects.list"
    std::string method;  // GET, DELETE, POST
    std::string path;    // from the root: "/storage/v1/b/B/o"
    std::string query;   // encoded, without "?"
    std::string body;
    std::vector<std::pair<std::string, std::string>> headers = {};
  };
  ObjectResult<HttpResponse> Send(const Call& call);
  ObjectResult<HttpResponse> Attempt(const Call& call);
  std::string ObjectsPath() const;  // "/storage/v1/b/BUCKET/o"
  std::string ObjectPath(const std::string& key) const;

  GcsClientOptions options_;
  std::shared_ptr<gcp::GcpCredentials> credentials_;
  const Clock& clock_;
  HttpClient http_;
};

}  // namespace det::object_store
