#pragma once

// What the master needs of a bucket to read and remove checkpoints in it, whichever cloud keeps it
// (S3: s3_client.h; GCS: gcs_client.h), and how their failures read.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/cloud_error.h"
#include "common/status.h"

namespace det::object_store {

struct ObjectStoreError {
  std::string service;  // "s3", "gcs"
  std::string op;       // the API call: "DeleteObjects", "objects.list"
  std::string code;     // the service's code ("AccessDenied"), "" for transport failures
  std::string message;
  long http_status = 0;
  std::string request_id;
  CloudErrorKind kind = CloudErrorKind::kTransient;
  // "s3:DeleteObjects on bucket b failed: AccessDenied: Access Denied (HTTP 403, request id x);
  // the credentials used need s3:DeleteObject on arn:aws:s3:::b/*" (the permission named for
  // auth failures).
  std::string bucket;
  std::string ToString() const;
};

template <class T>
using ObjectResult = Result<T, ObjectStoreError>;

struct ObjectInfo {
  std::string key;
  uint64_t size = 0;
};

// One page of a listing, and the token of the next ("" on the last page).
struct ListPage {
  std::vector<ObjectInfo> objects;
  std::string next_token;
};
// Every object `fetch_page(token)` gives, from token "" through the last page. A token given
// twice is an error of `service`'s `op` on `bucket` (it would list forever).
ObjectResult<std::vector<ObjectInfo>> ListEveryPage(
    const std::string& service, const std::string& op, const std::string& bucket,
    const std::function<ObjectResult<ListPage>(const std::string& token)>& fetch_page);

// The Range header's value for `length` (> 0) bytes from `offset`: "bytes=OFFSET-LAST".
std::string ByteRange(uint64_t offset, uint64_t length);
// What a ranged GET's answer holds of the range: a 206's body as it is; a 200's (a server that
// ignores Range sends the whole object) cut to the range.
std::string PieceOfAnswer(long http_status, std::string body, uint64_t offset, uint64_t length);

// One bucket. Implementations are not thread-safe: one per thread.
class ObjectStore {
 public:
  virtual ~ObjectStore() = default;
  // Every object whose key starts with `prefix`, by key, through every page.
  virtual ObjectResult<std::vector<ObjectInfo>> List(const std::string& prefix) = 0;
  // Deletes `keys` (a key that is not there counts as deleted); returns how many were asked. An
  // error when any key is left, naming the first and how many.
  virtual ObjectResult<size_t> Delete(const std::vector<std::string>& keys) = 0;
  // At most `length` bytes of `key` from `offset` (fewer at its end, "" past it): a large object
  // is read piece by piece, never whole. kNotFound when there is no such object.
  virtual ObjectResult<std::string> ReadRange(const std::string& key, uint64_t offset,
                                              uint64_t length) = 0;
  // The bucket's name, for messages.
  virtual const std::string& bucket() const = 0;
};

}  // namespace det::object_store
