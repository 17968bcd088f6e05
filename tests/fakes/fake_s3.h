#pragma once

// A fake of Amazon S3's REST API, for tests: it checks SigV4 signatures as S3 does (payload hash
// declared in x-amz-content-sha256 and checked against the bytes received, Content-MD5, the
// bucket's region), answers with S3's XML and error documents, and keeps objects' bytes in files
// under `data_dir` (a 1 GiB upload is streamed to disk, never held in memory). The real `aws` CLI
// works against it (tests/integration/fake_s3_cli_test.cc).
//
// Addressing: path style ("/bucket/key") always; virtual-host style ("bucket.<suffix>/key")
// when `virtual_host_suffix` is set and the Host header ends with it.
//
// Calls: ListBuckets, CreateBucket, HeadBucket, DeleteBucket, GetBucketLocation, ListObjectsV2
// (prefix, delimiter, start-after, continuation, encoding-type=url, pages of at most
// `page_size`) and ListObjects (v1: marker, NextMarker; boto3's bucket.objects uses it), PutObject,
// GetObject (Range), HeadObject, DeleteObject, DeleteObjects, CreateMultipartUpload, UploadPart,
// CompleteMultipartUpload, AbortMultipartUpload, ListParts. Anything else is 501 NotImplemented
// naming the call.
//
// Admin endpoints (JSON, no signature): POST /_fake/fault {"op","code","status","times"},
// POST /_fake/key_fault {"code","times"} (the next `times` keys of DeleteObjects fail with
// `code`), POST /_fake/buckets {"name","region"}, GET /_fake/objects?bucket=B&prefix=P,
// GET /_fake/calls.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace det::testing {

struct FakeS3Options {
  std::string access_key_id = "AKIDFAKE";
  std::string secret_access_key = "fake-secret";
  std::string region = "us-west-2";  // the endpoint's region, and new buckets' by default
  std::string host = "127.0.0.1";
  std::filesystem::path data_dir;    // objects' bytes; a temporary folder of its own when empty
  std::string virtual_host_suffix;   // "s3.fake.test": Host "b.s3.fake.test" is bucket b
  size_t page_size = 1000;           // the most keys a list page holds, whatever max-keys says
  uint64_t min_part_size = 5 << 20;  // S3's: every part but the last is at least 5 MiB
};

class FakeS3 {
 public:
  explicit FakeS3(FakeS3Options options);
  ~FakeS3();
  // Listens on `host`:`port` (0: any) and serves on a thread of its own.
  void Start(int port = 0);
  void Stop();
  int port() const { return port_; }
  std::string endpoint() const { return "http://" + options_.host + ":" + std::to_string(port_); }

  // A bucket, as if created by CreateBucket (in `region`, else the endpoint's).
  void CreateBucket(const std::string& name, const std::string& region = "");
  // An object, as if put by PutObject (the bucket is made if need be).
  void Put(const std::string& bucket, const std::string& key, const std::string& bytes);
  // The next `times` calls of `op` ("DeleteObjects") fail with `code` and HTTP `status`.
  void InjectFault(const std::string& op, const std::string& code, int status, int times);
  // The next `times` keys that DeleteObjects is asked to delete fail with `code` (kept).
  void InjectKeyFault(const std::string& code, int times);
  // The objects of `bucket` under `prefix`: [{"key","size","etag"}], by key.
  nlohmann::json Objects(const std::string& bucket, const std::string& prefix = "");
  // Every call so far: {"op","bucket","key","virtual_host"}.
  nlohmann::json Calls();
  int CallCount(const std::string& op);

  // The fake's state and one call being served (tests/fakes/fake_s3_wire.h).
  struct Object;
  struct Bucket;
  struct Upload;
  struct Call;

 private:
  void Route();
  void Handle(const httplib::Request& request, httplib::Response& response, Call& call);
  void HandleAdmin(const httplib::Request& request, httplib::Response& response);
  std::string RegionFor(const std::string& bucket);
  bool HasBucket(const std::string& name);
  // The fault injected for the next call of `op`, if any: (code, HTTP status).
  std::optional<std::pair<std::string, int>> TakeFault(const std::string& op);

  void ListBuckets(Call& call, httplib::Response& response);
  void CreateBucket(Call& call, httplib::Response& response);
  void BucketCall(Call& call, httplib::Response& response);
  void ListObjects(Call& call, httplib::Response& response);  // V2, and V1 (`marker`)
  void PutObject(Call& call, httplib::Response& response);
  void GetObject(Call& call, httplib::Response& response);
  void DeleteObject(Call& call, httplib::Response& response);
  void DeleteObjects(Call& call, httplib::Response& response);
  void CreateMultipartUpload(Call& call, httplib::Response& response);
  void UploadPart(Call& call, httplib::Response& response);
  void CompleteMultipartUpload(Call& call, httplib::Response& response);
  void AbortMultipartUpload(Call& call, httplib::Response& response);
  void ListParts(Call& call, httplib::Response& response);

  // A new file under data_dir for bytes being received.
  std::filesystem::path NewDataFile();

  FakeS3Options options_;
  std::filesystem::path owned_data_dir_;  // removed at destruction when the fake made it
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
  std::mutex mu_;
  std::map<std::string, Bucket> buckets_;
  std::map<std::string, Upload> uploads_;                                   // by upload id
  std::map<std::string, std::vector<std::pair<std::string, int>>> faults_;  // op → (code, status)
  std::vector<std::string> key_faults_;
  nlohmann::json calls_ = nlohmann::json::array();
  uint64_t next_id_ = 1;
};

}  // namespace det::testing
