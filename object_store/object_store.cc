#include "object_store/object_store.h"

#include <set>

namespace det::object_store {
namespace {

// The IAM permission (S3) or Cloud Storage permission (GCS) a call needs.
std::string PermissionFor(const std::string& service, const std::string& op) {
  if (service == "s3") {
    if (op == "ListObjectsV2") return "s3:ListBucket";
    if (op == "DeleteObjects" || op == "DeleteObject") return "s3:DeleteObject";
    if (op == "PutObject") return "s3:PutObject";
    if (op == "GetObject" || op == "HeadObject") return "s3:GetObject";
    return "";
  }
  if (op == "objects.list") return "storage.objects.list";
  if (op == "objects.delete") return "storage.objects.delete";
  if (op == "objects.insert") return "storage.objects.create";
  if (op == "objects.get") return "storage.objects.get";
  return "";
}

}  // namespace

std::string ObjectStoreError::ToString() const {
  std::string text = service + ":" + op + (bucket.empty() ? "" : " on bucket " + bucket) +
                     " failed: " + (code.empty() ? "" : code + ": ") + message;
  if (http_status != 0 || !request_id.empty()) {
    text += " (";
    if (http_status != 0) text += "HTTP " + std::to_string(http_status);
    if (!request_id.empty())
      text += (http_status != 0 ? ", request id " : "request id ") + request_id;
    text += ")";
  }
  const std::string permission = PermissionFor(service, op);
  if (kind == CloudErrorKind::kAuth && !permission.empty()) {
    text += "; the credentials used need " + permission +
            (service == "s3" ? " on arn:aws:s3:::" + bucket + (op == "ListObjectsV2" ? "" : "/*")
                             : " on gs://" + bucket);
  }
  return text;
}

ObjectResult<std::vector<ObjectInfo>> ListEveryPage(
    const std::string& service, const std::string& op, const std::string& bucket,
    const std::function<ObjectResult<ListPage>(const std::string& token)>& fetch_page) {
  std::vector<ObjectInfo> objects;
  std::string token;
  std::set<std::string> tokens_seen;
  do {
    ObjectResult<ListPage> page = fetch_page(token);
    if (!page.ok()) {
      ObjectStoreError error = page.error();
      error.bucket = bucket;
      return error;
    }
    if (!page->next_token.empty() && !tokens_seen.insert(page->next_token).second) {
      return ObjectStoreError{
          service, op, "MalformedResponse",        "the same page token twice: " + page->next_token,
          200,     "", CloudErrorKind::kTransient, bucket};
    }
    for (ObjectInfo& object : page->objects) objects.push_back(std::move(object));
    token = page->next_token;
  } while (!token.empty());
  return objects;
}

std::string ByteRange(uint64_t offset, uint64_t length) {
  return "bytes=" + std::to_string(offset) + "-" + std::to_string(offset + length - 1);
}

std::string PieceOfAnswer(long http_status, std::string body, uint64_t offset, uint64_t length) {
  if (http_status == 206) return body;
  if (offset >= body.size()) return "";
  return body.substr(offset, length);
}

}  // namespace det::object_store
