#pragma once

// A fake of Google Cloud Storage's JSON API (https://cloud.google.com/storage/docs/json_api/v1),
// served by the fake Compute Engine (tests/fakes/fake_gce.h) on its port, so the tokens its token
// endpoint and metadata server issue are the ones it takes. The real `gcloud storage` works
// against it (tests/integration/fake_gcs_cli_test.cc), and so do Google's client libraries with
// STORAGE_EMULATOR_HOST (with `allow_anonymous`: they send no token then).
//
// Calls (the method names faults and the call log use):
//   buckets.insert   POST   /storage/v1/b?project=P              {"name"}; 409 conflict if it is
//   buckets.list     GET    /storage/v1/b
//   buckets.get      GET    /storage/v1/b/B
//   buckets.delete   DELETE /storage/v1/b/B                       409 conflict unless empty
//   buckets.getStorageLayout GET /storage/v1/b/B/storageLayout    (`gcloud storage rm -r` asks)
//   managedFolders.list      GET /storage/v1/b/B/managedFolders   (none, ever)
//   objects.list     GET    /storage/v1/b/B/o   prefix, delimiter (→ prefixes), pageToken,
//                           maxResults, startOffset, endOffset; pages of at most `page_size`
//                           items and prefixes together; versions, fields, projection ignored
//   objects.get      GET    /storage/v1/b/B/o/O                   the Object; ?alt=media: bytes
//                    GET    /download/storage/v1/b/B/o/O?alt=media  (mediaLink) bytes; Range
//   objects.delete   DELETE /storage/v1/b/B/o/O[?generation=G]    204; 404 notFound if absent
//   objects.insert   POST   /upload/storage/v1/b/B/o and /resumable/upload/storage/v1/b/B/o
//                           ?uploadType=media&name=O | multipart (multipart/related: the JSON
//                           metadata, then the bytes; LF or CRLF, quoted boundary or not) |
//                           resumable (answers exactly 200 and Location: the session)
//   objects.insert.chunk PUT the session's URL (?upload_id=): Content-Range "bytes a-b/N",
//                           "bytes a-b/*", "bytes */N", "bytes */*"; 308 with "Range:
//                           bytes=0-LAST" (no Range while nothing is stored) until the last
//                           byte, then 200 with the Object
// Object names arrive percent-encoded ('/' as %2F) and are decoded once. Objects carry size,
// generation and metageneration as strings, md5Hash, crc32c (Castagnoli, base64 of its 4
// big-endian bytes), RFC 3339 times with milliseconds, selfLink and an absolute mediaLink.
// `ifGenerationMatch` is honoured on uploads, gets and deletes (412 conditionNotMet). A
// `generation` that is not the object's is notFound: there are no older versions.
//
// Media is served with httplib's content provider (never compressed, Range answered 206 with
// Content-Range) with X-Goog-Hash and X-Goog-Generation; uploads stream to files under
// `data_dir`, so a 1 GiB object is never held in memory.
// Limitation: an error answer (an injected fault included) to a request with a Range header is
// sliced by httplib like any body, so a fault on a ranged read past the error's length comes back
// as 416, which real Cloud Storage would not send: inject read faults on unranged calls.
//
// Errors are Google's JSON error document ({"error": {"code", "message", "errors": [{"domain",
// "reason", "message"}]}}). Without a token the host issued: 401 `required`.
//
// Thread-safe: its state is under a lock of its own, which is never held while it calls its host.

#include <chrono>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace httplib {
class Server;
struct Request;
struct Response;
class ContentReader;
}  // namespace httplib

namespace det::testing {

struct FakeGcsOptions {
  std::filesystem::path data_dir;  // objects' bytes; a temporary folder of its own when empty
  size_t page_size = 1000;         // the most items and prefixes an objects.list page holds
  bool allow_anonymous = false;    // calls without an Authorization header are let in
};

// What the fake asks of the server it is mounted on. Each is called without the fake's lock.
struct FakeGcsHost {
  // "http://127.0.0.1:PORT": where mediaLink, selfLink and resumable sessions point.
  std::function<std::string()> base_url;
  // Whether `authorization` ("Bearer x") carries a token the host issued and has not revoked.
  std::function<bool(const std::string& authorization)> authorized;
  // Records one call of `method` ("objects.get") on `path`; the fault injected for it, if any:
  // (HTTP status, reason).
  std::function<std::optional<std::pair<int, std::string>>(const std::string& method,
                                                           const std::string& path)>
      admit;
};

class FakeGcs {
 public:
  FakeGcs(FakeGcsOptions options, FakeGcsHost host);
  ~FakeGcs();  // removes data_dir when the fake made it
  FakeGcs(const FakeGcs&) = delete;
  FakeGcs& operator=(const FakeGcs&) = delete;

  // Adds the API's routes to `server` (before it listens).
  void Route(httplib::Server& server);

  // Admin, for tests in process. A bucket, as if made by buckets.insert (no-op if it exists).
  void CreateBucket(const std::string& name);
  // An object, as if uploaded (the bucket is made if need be); replaces one of that name.
  void PutObject(const std::string& bucket, const std::string& name, const std::string& bytes);
  // The names of `bucket`'s objects under `prefix`, in order; empty if there is no such bucket.
  std::vector<std::string> ObjectNames(const std::string& bucket, const std::string& prefix = "");
  // An object's bytes; nullopt if there is no such object.
  std::optional<std::string> ObjectBytes(const std::string& bucket, const std::string& name);
  // The admin endpoint /_fake/gcs/`what`: POST buckets {"name"}, GET objects?bucket=B&prefix=P
  // ([{"name","size"}]); nullopt if `what` is neither.
  std::optional<nlohmann::json> Admin(const std::string& what, const httplib::Request& request);

  // The fake's state and one call being served (fake_gcs_wire.h).
  struct Object;
  struct Bucket;
  struct Session;
  struct Call;

 private:
  void Handle(const httplib::Request& request, httplib::Response& response,
              const httplib::ContentReader* reader);
  // Who may call, and which fault the host scripted: false once `response` holds the refusal.
  bool Admit(Call& call, httplib::Response& response);

  void InsertBucket(Call& call, httplib::Response& response);
  void ListBuckets(Call& call, httplib::Response& response);
  void BucketCall(Call& call, httplib::Response& response);  // get, delete, layout, folders
  void ListObjects(Call& call, httplib::Response& response);
  void GetObject(Call& call, httplib::Response& response);
  void DeleteObject(Call& call, httplib::Response& response);
  // fake_gcs_upload.cc
  void InsertObject(Call& call, httplib::Response& response);
  void UploadMedia(Call& call, httplib::Response& response);
  void UploadMultipart(Call& call, httplib::Response& response);
  void StartResumable(Call& call, httplib::Response& response);
  void PutChunk(Call& call, httplib::Response& response);
  // Makes `object` (its file, size and hashes set) `name` in `bucket` with a new generation, if
  // `if_generation_match` (when set) is the current one (0: none). The answer: 200 and the
  // Object's JSON, or the refusal (the file then removed).
  std::pair<int, nlohmann::json> Commit(const std::string& bucket, const std::string& name,
                                        Object object, std::optional<int64_t> if_generation_match);
  bool HasBucket(const std::string& name);

  // `base`: host_.base_url(), asked before the lock is taken.
  static nlohmann::json ObjectJson(const std::string& base, const std::string& bucket,
                                   const std::string& name, const Object& object);
  static nlohmann::json BucketJson(const std::string& base, const std::string& name,
                                   const Bucket& bucket);
  std::filesystem::path NewDataFile();

  FakeGcsOptions options_;
  FakeGcsHost host_;
  std::filesystem::path owned_data_dir_;  // removed at destruction when the fake made it
  std::mutex mu_;
  std::map<std::string, Bucket> buckets_;
  std::map<std::string, Session> sessions_;    // resumable uploads by upload_id
  std::deque<std::string> finished_sessions_;  // oldest first; at most kMaxFinishedSessions kept
  int64_t last_generation_ = 0;
  uint64_t next_id_ = 1;
};

}  // namespace det::testing
