#include "tests/fakes/fake_s3.h"

#include <pugixml.hpp>
#include <random>

#include "common/http_client.h"
#include "tests/fakes/fake_aws_auth.h"
#include "tests/fakes/fake_listing.h"
#include "tests/fakes/fake_s3_wire.h"
#include "tests/fakes/served_file.h"

namespace det::testing {
using namespace s3wire;

namespace {

constexpr size_t kMaxCalls = 100000;

// Sub-resources the fake does not serve: a call naming one is NotImplemented, not mistaken for
// a call on the object or bucket itself.
constexpr const char* kUnservedSubresources[] = {
    "acl",     "tagging",      "versioning",  "policy",     "cors",     "lifecycle", "website",
    "logging", "notification", "replication", "encryption", "versions", "retention", "legal-hold"};

// The S3 API call a request makes ("" when it makes none the fake knows).
std::string OpOf(const httplib::Request& request, const std::map<std::string, std::string>& params,
                 const std::string& bucket, const std::string& key) {
  const std::string& method = request.method;
  auto has = [&](const char* name) { return params.count(name) > 0; };
  for (const char* name : kUnservedSubresources) {
    if (has(name)) return "";
  }
  if (bucket.empty()) return method == "GET" ? "ListBuckets" : "";
  if (key.empty()) {
    if (method == "GET" && has("location")) return "GetBucketLocation";
    if (method == "GET" && params.count("list-type") && params.at("list-type") == "2") {
      return "ListObjectsV2";
    }
    if (method == "GET" && !params.count("list-type") && !params.count("uploads")) {
      return "ListObjects";
    }
    if (method == "HEAD") return "HeadBucket";
    if (method == "PUT" && params.empty()) return "CreateBucket";
    if (method == "DELETE" && params.empty()) return "DeleteBucket";
    if (method == "POST" && has("delete")) return "DeleteObjects";
    return "";
  }
  if (method == "GET") return has("uploadId") ? "ListParts" : "GetObject";
  if (method == "HEAD") return "HeadObject";
  if (method == "PUT") {
    if (!request.get_header_value("x-amz-copy-source").empty()) return "";
    return has("uploadId") || has("partNumber") ? "UploadPart" : "PutObject";
  }
  if (method == "POST") {
    if (has("uploads")) return "CreateMultipartUpload";
    if (has("uploadId")) return "CompleteMultipartUpload";
    return "";
  }
  if (method == "DELETE") return has("uploadId") ? "AbortMultipartUpload" : "DeleteObject";
  return "";
}

// A ListObjectsV2 continuation token: where the last page stopped ("k" after a key, "p" after a
// common prefix, whose keys are all passed).
std::string Token(char kind, const std::string& marker) {
  return Base64UrlEncode(std::string(1, kind) + marker);
}

}  // namespace

FakeS3::FakeS3(FakeS3Options options) : options_(std::move(options)) {
  if (options_.data_dir.empty()) {
    std::random_device random;
    owned_data_dir_ = fs::temp_directory_path() /
                      ("fake-s3-" + std::to_string(getpid()) + "-" + std::to_string(random()));
    options_.data_dir = owned_data_dir_;
  }
  fs::create_directories(options_.data_dir);
}

FakeS3::~FakeS3() {
  Stop();
  if (!owned_data_dir_.empty()) {
    std::error_code ignored;
    fs::remove_all(owned_data_dir_, ignored);
  }
}

void FakeS3::Start(int port) {
  server_ = std::make_unique<httplib::Server>();
  // httplib's default pool (8 threads here) holds a worker per kept-alive connection: the aws
  // CLI's 10 download threads would leave two waiting out the 5 s keep-alive of others.
  server_->new_task_queue = [] { return new httplib::ThreadPool(64); };
  Route();
  port_ = port == 0 ? server_->bind_to_any_port(options_.host)
                    : (server_->bind_to_port(options_.host, port) ? port : -1);
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  // stop() before the accept loop runs would be lost: wait for it.
  while (!server_->is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

void FakeS3::Stop() {
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
  server_.reset();
}

void FakeS3::Route() {
  auto serve = [this](const httplib::Request& request, httplib::Response& response,
                      const httplib::ContentReader* reader) {
    if (request.path.starts_with("/_fake/")) return HandleAdmin(request, response);
    Call call{request, reader, {}, "", "", false, ""};
    Handle(request, response, call);
    ApplyRangesOnlyToObjects(request, response);
  };
  auto plain = [serve](const httplib::Request& request, httplib::Response& response) {
    serve(request, response, nullptr);
  };
  server_->Get(".*", plain);  // and HEAD
  server_->Post(".*", plain);
  server_->Delete(".*", plain);
  server_->Put(
      ".*", [serve](const httplib::Request& request, httplib::Response& response,
                    const httplib::ContentReader& reader) { serve(request, response, &reader); });
}

void FakeS3::Handle(const httplib::Request& request, httplib::Response& response, Call& call) {
  {
    std::lock_guard lock(mu_);
    response.set_header("x-amz-request-id", "FAKE" + std::to_string(next_id_++));
  }
  const size_t question = request.target.find('?');
  const std::string raw_path = request.target.substr(0, question);
  if (question != std::string::npos) call.params = FormDecode(request.target.substr(question + 1));
  std::string host = request.get_header_value("Host");
  if (const size_t colon = host.rfind(':');
      colon != std::string::npos &&
      host.find_first_not_of("0123456789", colon + 1) == std::string::npos) {
    host.resize(colon);  // the port
  }
  const std::string& suffix = options_.virtual_host_suffix;
  if (!suffix.empty() && host.size() > suffix.size() + 1 && host.ends_with("." + suffix)) {
    call.virtual_host = true;
    call.bucket = host.substr(0, host.size() - suffix.size() - 1);
    call.key = UriDecode(raw_path.substr(1));
  } else {
    const size_t slash = raw_path.find('/', 1);
    call.bucket = UriDecode(raw_path.substr(1, slash == std::string::npos ? slash : slash - 1));
    if (slash != std::string::npos) call.key = UriDecode(raw_path.substr(slash + 1));
  }
  call.op = OpOf(request, call.params, call.bucket, call.key);
  {
    std::lock_guard lock(mu_);
    if (calls_.size() < kMaxCalls) {
      calls_.push_back({{"op", call.op.empty() ? request.method + " " + raw_path : call.op},
                        {"bucket", call.bucket},
                        {"key", call.key},
                        {"virtual_host", call.virtual_host}});
    }
  }
  const std::optional<AwsAuthFailure> refused = VerifyAwsSignature(
      request, {options_.access_key_id, options_.secret_access_key, RegionFor(call.bucket), "s3"});
  if (refused) {
    std::string extra;
    if (refused->code == "AuthorizationHeaderMalformed") {
      extra = Element("Region", RegionFor(call.bucket));
      response.set_header("x-amz-bucket-region", RegionFor(call.bucket));
    }
    Drain(call.reader);
    return Fail(request, response, StatusOf(refused->code), refused->code, refused->message, extra);
  }
  const std::string declared = request.get_header_value("x-amz-content-sha256");
  if (declared.empty()) {
    Drain(call.reader);
    return Fail(request, response, 400, "InvalidRequest",
                "Missing required header for this request: x-amz-content-sha256");
  }
  if (declared.starts_with("STREAMING-")) {
    Drain(call.reader);
    return Fail(
        request, response, 501, "NotImplemented",
        "the fake does not take aws-chunked bodies (x-amz-content-sha256: " + declared + ")");
  }
  if (call.reader == nullptr &&
      !BodyMatches(request, response, Digests::Md5(request.body), aws::Sha256Hex(request.body))) {
    return;
  }
  if (call.op.empty()) {
    Drain(call.reader);
    return Fail(request, response, 501, "NotImplemented",
                "the fake S3 does not serve " + request.method + " " + request.target);
  }
  if (const auto fault = TakeFault(call.op)) {
    Drain(call.reader);
    return Fail(request, response, fault->second, fault->first, "injected fault");
  }
  using Handler = void (FakeS3::*)(Call&, httplib::Response&);
  static const std::map<std::string, Handler> kHandlers = {
      {"ListBuckets", &FakeS3::ListBuckets},
      {"CreateBucket", &FakeS3::CreateBucket},
      {"HeadBucket", &FakeS3::BucketCall},
      {"DeleteBucket", &FakeS3::BucketCall},
      {"GetBucketLocation", &FakeS3::BucketCall},
      {"ListObjectsV2", &FakeS3::ListObjects},
      {"ListObjects", &FakeS3::ListObjects},
      {"PutObject", &FakeS3::PutObject},
      {"GetObject", &FakeS3::GetObject},
      {"HeadObject", &FakeS3::GetObject},
      {"DeleteObject", &FakeS3::DeleteObject},
      {"DeleteObjects", &FakeS3::DeleteObjects},
      {"CreateMultipartUpload", &FakeS3::CreateMultipartUpload},
      {"UploadPart", &FakeS3::UploadPart},
      {"CompleteMultipartUpload", &FakeS3::CompleteMultipartUpload},
      {"AbortMultipartUpload", &FakeS3::AbortMultipartUpload},
      {"ListParts", &FakeS3::ListParts}};
  (this->*kHandlers.at(call.op))(call, response);
}

std::string FakeS3::RegionFor(const std::string& bucket) {
  std::lock_guard lock(mu_);
  auto it = buckets_.find(bucket);
  return it == buckets_.end() ? options_.region : it->second.region;
}

std::optional<std::pair<std::string, int>> FakeS3::TakeFault(const std::string& op) {
  std::lock_guard lock(mu_);
  auto it = faults_.find(op);
  if (it == faults_.end() || it->second.empty()) return std::nullopt;
  const auto fault = it->second.front();
  it->second.erase(it->second.begin());
  return fault;
}

bool FakeS3::HasBucket(const std::string& name) {
  std::lock_guard lock(mu_);
  return buckets_.count(name) > 0;
}

fs::path FakeS3::NewDataFile() {
  std::lock_guard lock(mu_);
  return options_.data_dir / ("blob-" + std::to_string(next_id_++));
}

void FakeS3::ListBuckets(Call& call, httplib::Response& response) {
  (void)call;
  std::string inner;
  std::lock_guard lock(mu_);
  for (const auto& [name, bucket] : buckets_) {
    inner += "<Bucket>" + Element("Name", name) + Element("CreationDate", IsoTime(bucket.created)) +
             "</Bucket>";
  }
  response.set_content(
      S3Document("ListAllMyBucketsResult",
                 "<Owner><ID>fake-owner</ID><DisplayName>fake</DisplayName></Owner>"
                 "<Buckets>" +
                     inner + "</Buckets>"),
      "application/xml");
}

void FakeS3::CreateBucket(Call& call, httplib::Response& response) {
  const std::string body = ReadBody(*call.reader);
  std::string region = options_.region;
  if (!body.empty()) {
    pugi::xml_document document;
    if (!document.load_string(body.c_str())) {
      return Fail(call.request, response, 400, "MalformedXML",
                  "The XML you provided was not well-formed or did not validate against our "
                  "published schema.");
    }
    const std::string constraint =
        document.child("CreateBucketConfiguration").child_value("LocationConstraint");
    if (!constraint.empty()) region = constraint;
  }
  std::lock_guard lock(mu_);
  if (buckets_.count(call.bucket) > 0) {
    return Fail(call.request, response, 409, "BucketAlreadyOwnedByYou",
                "Your previous request to create the named bucket succeeded and you already "
                "own it.",
                Element("BucketName", call.bucket));
  }
  buckets_[call.bucket] = Bucket{region, Clock::now(), {}};
  response.set_header("Location", "/" + call.bucket);
  response.set_content("", "application/xml");
}

void FakeS3::CreateBucket(const std::string& name, const std::string& region) {
  std::lock_guard lock(mu_);
  buckets_.try_emplace(name, Bucket{region.empty() ? options_.region : region, Clock::now(), {}});
}

void FakeS3::BucketCall(Call& call, httplib::Response& response) {
  std::lock_guard lock(mu_);
  auto it = buckets_.find(call.bucket);
  if (it == buckets_.end()) {
    return Fail(call.request, response, 404, "NoSuchBucket", "The specified bucket does not exist",
                Element("BucketName", call.bucket));
  }
  response.set_header("x-amz-bucket-region", it->second.region);
  if (call.op == "GetBucketLocation") {
    // us-east-1 is an empty constraint, as S3 answers.
    const std::string region = it->second.region == "us-east-1" ? "" : it->second.region;
    response.set_content(S3Document("LocationConstraint", XmlEscape(region)), "application/xml");
  } else if (call.op == "DeleteBucket") {
    if (!it->second.objects.empty()) {
      return Fail(call.request, response, 409, "BucketNotEmpty",
                  "The bucket you tried to delete is not empty",
                  Element("BucketName", call.bucket));
    }
    buckets_.erase(it);
    response.status = 204;
  }
}

void FakeS3::ListObjects(Call& call, httplib::Response& response) {
  const bool v2 = call.op == "ListObjectsV2";
  auto param = [&](const char* name) {
    auto it = call.params.find(name);
    return it == call.params.end() ? std::string() : it->second;
  };
  const std::string prefix = param("prefix");
  const std::string delimiter = param("delimiter");
  const std::string start_after = param("start-after");
  const bool url_encoded = param("encoding-type") == "url";
  if (!param("encoding-type").empty() && !url_encoded) {
    return Fail(call.request, response, 400, "InvalidArgument",
                "Invalid Encoding Method specified");
  }
  size_t max_keys = 1000;
  if (!param("max-keys").empty()) {
    try {
      max_keys = std::stoul(param("max-keys"));
    } catch (const std::exception&) {
      return Fail(call.request, response, 400, "InvalidArgument",
                  "Provided max-keys not an integer or within integer range");
    }
  }
  const size_t page = std::min(max_keys, options_.page_size);
  // Where to start: after the token's marker, else after start-after (v1: after `marker`, a key
  // or a common prefix).
  char kind = 'k';
  std::string marker = v2 ? start_after : param("marker");
  if (!v2 && !delimiter.empty() && marker.ends_with(delimiter)) kind = 'p';
  if (const std::string token = param("continuation-token"); v2 && !token.empty()) {
    Result<std::string> decoded = Base64UrlDecode(token);
    if (!decoded.ok() || decoded->empty()) {
      return Fail(call.request, response, 400, "InvalidArgument",
                  "The continuation token provided is incorrect");
    }
    kind = (*decoded)[0];
    marker = decoded->substr(1);
  }
  auto encode = [&](const std::string& text) { return url_encoded ? UriEncode(text, true) : text; };
  std::string contents;
  std::string common_prefixes;
  ListingPage listed;
  std::string next_token;
  {
    std::lock_guard lock(mu_);
    auto bucket = buckets_.find(call.bucket);
    if (bucket == buckets_.end()) {
      return Fail(call.request, response, 404, "NoSuchBucket",
                  "The specified bucket does not exist", Element("BucketName", call.bucket));
    }
    const auto& objects = bucket->second.objects;
    auto it = marker < prefix ? objects.lower_bound(prefix) : objects.upper_bound(marker);
    if (page > 0) {  // max-keys=0: an empty page
      listed = ListPage(
          objects, it, {prefix, delimiter, kind == 'p' ? marker : "", "", page},
          [&](const std::string& key, const Object& object) {
            contents += "<Contents>" + Element("Key", encode(key)) +
                        Element("LastModified", IsoTime(object.modified)) +
                        Element("ETag", object.etag) +
                        Element("Size", std::to_string(object.size)) +
                        Element("StorageClass", "STANDARD") + "</Contents>";
            next_token = v2 ? Token('k', key) : key;
          },
          [&](const std::string& common) {
            common_prefixes +=
                "<CommonPrefixes>" + Element("Prefix", encode(common)) + "</CommonPrefixes>";
            next_token = v2 ? Token('p', common) : common;
          });
    }
  }
  const size_t count = listed.count;
  const bool truncated = listed.truncated;
  std::string inner = Element("Name", call.bucket) + Element("Prefix", encode(prefix)) +
                      (v2 ? Element("KeyCount", std::to_string(count))
                          : Element("Marker", encode(param("marker")))) +
                      Element("MaxKeys", std::to_string(max_keys)) +
                      (delimiter.empty() ? "" : Element("Delimiter", encode(delimiter))) +
                      (url_encoded ? Element("EncodingType", "url") : "") +
                      Element("IsTruncated", truncated ? "true" : "false");
  if (v2 && !param("continuation-token").empty()) {
    inner += Element("ContinuationToken", param("continuation-token"));
  }
  if (truncated) {
    inner += v2 ? Element("NextContinuationToken", next_token)
                : Element("NextMarker", encode(next_token));
  }
  if (v2 && !start_after.empty()) inner += Element("StartAfter", encode(start_after));
  response.set_content(S3Document("ListBucketResult", inner + contents + common_prefixes),
                       "application/xml");
}

void FakeS3::PutObject(Call& call, httplib::Response& response) {
  if (!HasBucket(call.bucket)) {
    Drain(call.reader);
    return Fail(call.request, response, 404, "NoSuchBucket", "The specified bucket does not exist",
                Element("BucketName", call.bucket));
  }
  const fs::path file = NewDataFile();
  auto received = Receive(call.request, response, *call.reader, file);
  if (!received) return;
  Object object{file, received->first, "\"" + Digests::Hex(received->second) + "\"",
                call.request.get_header_value("Content-Type"), Clock::now()};
  response.set_header("ETag", object.etag);
  std::lock_guard lock(mu_);
  auto bucket = buckets_.find(call.bucket);
  if (bucket == buckets_.end()) {
    fs::remove(file);
    return Fail(call.request, response, 404, "NoSuchBucket", "The specified bucket does not exist");
  }
  Replace(bucket->second.objects, call.key, object);
}

void FakeS3::GetObject(Call& call, httplib::Response& response) {
  std::optional<Object> object;
  SharedFd fd;
  {
    std::lock_guard lock(mu_);
    auto bucket = buckets_.find(call.bucket);
    if (bucket == buckets_.end()) {
      return Fail(call.request, response, 404, "NoSuchBucket",
                  "The specified bucket does not exist", Element("BucketName", call.bucket));
    }
    auto it = bucket->second.objects.find(call.key);
    if (it != bucket->second.objects.end()) {
      object = it->second;
      fd = OpenShared(object->file);  // under the lock: the bytes of this version
    }
  }
  if (!object) {
    return Fail(call.request, response, 404, "NoSuchKey", "The specified key does not exist.",
                Element("Key", call.key));
  }
  if (*fd < 0) {
    return Fail(call.request, response, 500, "InternalError", "the fake lost the object's bytes");
  }
  response.set_header("ETag", object->etag);
  response.set_header("Last-Modified", HttpDate(object->modified));
  response.set_header("Accept-Ranges", "bytes");
  const std::string type =
      object->content_type.empty() ? "binary/octet-stream" : object->content_type;
  ServeFile(response, fd, object->size, type);
}

void FakeS3::DeleteObject(Call& call, httplib::Response& response) {
  std::lock_guard lock(mu_);
  auto bucket = buckets_.find(call.bucket);
  if (bucket == buckets_.end()) {
    return Fail(call.request, response, 404, "NoSuchBucket", "The specified bucket does not exist",
                Element("BucketName", call.bucket));
  }
  auto it = bucket->second.objects.find(call.key);
  if (it != bucket->second.objects.end()) {
    fs::remove(it->second.file);
    bucket->second.objects.erase(it);
  }
  response.status = 204;  // also when there was no such key, as S3 answers
}

void FakeS3::DeleteObjects(Call& call, httplib::Response& response) {
  const std::string& body = call.request.body;
  if (call.request.get_header_value("Content-MD5").empty() &&
      call.request.get_header_value("x-amz-checksum-crc32").empty() &&
      call.request.get_header_value("x-amz-checksum-sha256").empty()) {
    return Fail(call.request, response, 400, "InvalidRequest",
                "Missing required header for this request: Content-Md5.");
  }
  pugi::xml_document document;
  const pugi::xml_node root =
      document.load_string(body.c_str()) ? document.child("Delete") : pugi::xml_node();
  std::vector<std::string> keys;
  for (pugi::xml_node object : root.children("Object")) keys.push_back(object.child_value("Key"));
  if (!root || keys.empty() || keys.size() > 1000) {
    return Fail(call.request, response, 400, "MalformedXML",
                "The XML you provided was not well-formed or did not validate against our "
                "published schema.");
  }
  const bool quiet = std::string(root.child_value("Quiet")) == "true";
  std::string inner;
  std::lock_guard lock(mu_);
  auto bucket = buckets_.find(call.bucket);
  if (bucket == buckets_.end()) {
    return Fail(call.request, response, 404, "NoSuchBucket", "The specified bucket does not exist",
                Element("BucketName", call.bucket));
  }
  for (const std::string& key : keys) {
    if (!key_faults_.empty()) {
      const std::string code = key_faults_.front();
      key_faults_.erase(key_faults_.begin());
      inner += "<Error>" + Element("Key", key) + Element("Code", code) +
               Element("Message", "injected fault") + "</Error>";
      continue;
    }
    auto it = bucket->second.objects.find(key);
    if (it != bucket->second.objects.end()) {
      fs::remove(it->second.file);
      bucket->second.objects.erase(it);
    }
    if (!quiet) inner += "<Deleted>" + Element("Key", key) + "</Deleted>";
  }
  response.set_content(S3Document("DeleteResult", inner), "application/xml");
}

void FakeS3::Put(const std::string& bucket, const std::string& key, const std::string& bytes) {
  CreateBucket(bucket);
  const fs::path file = NewDataFile();
  std::ofstream(file, std::ios::binary) << bytes;
  Object object{file, bytes.size(), "\"" + Digests::Hex(Digests::Md5(bytes)) + "\"", "",
                Clock::now()};
  std::lock_guard lock(mu_);
  Replace(buckets_[bucket].objects, key, object);
}

void FakeS3::InjectFault(const std::string& op, const std::string& code, int status, int times) {
  std::lock_guard lock(mu_);
  for (int i = 0; i < times; ++i) faults_[op].emplace_back(code, status);
}

void FakeS3::InjectKeyFault(const std::string& code, int times) {
  std::lock_guard lock(mu_);
  for (int i = 0; i < times; ++i) key_faults_.push_back(code);
}

nlohmann::json FakeS3::Objects(const std::string& bucket, const std::string& prefix) {
  std::lock_guard lock(mu_);
  nlohmann::json out = nlohmann::json::array();
  auto it = buckets_.find(bucket);
  if (it == buckets_.end()) return out;
  for (const auto& [key, object] : it->second.objects) {
    if (!key.starts_with(prefix)) continue;
    out.push_back({{"key", key}, {"size", object.size}, {"etag", object.etag}});
  }
  return out;
}

nlohmann::json FakeS3::Calls() {
  std::lock_guard lock(mu_);
  return calls_;
}

int FakeS3::CallCount(const std::string& op) {
  std::lock_guard lock(mu_);
  int count = 0;
  for (const auto& call : calls_) count += call["op"] == op ? 1 : 0;
  return count;
}

void FakeS3::HandleAdmin(const httplib::Request& request, httplib::Response& response) {
  const nlohmann::json body = nlohmann::json::parse(request.body, nullptr, false);
  const std::string what = request.path.substr(std::string("/_fake/").size());
  nlohmann::json answer = {{"ok", true}};
  if (what == "fault" && body.is_object()) {
    InjectFault(body.value("op", ""), body.value("code", "InternalError"),
                body.value("status", 500), body.value("times", 1));
  } else if (what == "key_fault" && body.is_object()) {
    InjectKeyFault(body.value("code", "InternalError"), body.value("times", 1));
  } else if (what == "buckets" && body.is_object()) {
    CreateBucket(body.value("name", ""), body.value("region", ""));
  } else if (what == "objects") {
    answer = Objects(request.get_param_value("bucket"), request.get_param_value("prefix"));
  } else if (what == "calls") {
    answer = Calls();
  } else {
    response.status = 404;
    answer = {{"error", "no admin endpoint " + request.method + " " + request.path}};
  }
  response.set_content(answer.dump(), "application/json");
}

}  // namespace det::testing
