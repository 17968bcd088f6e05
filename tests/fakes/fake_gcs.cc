#include "tests/fakes/fake_gcs.h"

#include <fstream>
#include <random>
#include <regex>

#include "common/http_client.h"
#include "tests/fakes/fake_gcs_wire.h"
#include "tests/fakes/fake_listing.h"

// The fake Cloud Storage's routing, admission, buckets, listing, reads and deletes; uploads are
// in fake_gcs_upload.cc.

namespace det::testing {
// Qualified: in a unity batch, fake_s3*.cc's `using namespace s3wire` reaches this file too.
namespace wire = gcswire;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Where each kind of path starts; what follows is "" | /B | /B/o | /B/o/NAME | /B/<sub>.
enum class Root { kApi, kDownload, kUpload };
constexpr std::pair<const char*, Root> kRoots[] = {
    {"/storage/v1/b", Root::kApi},
    {"/download/storage/v1/b", Root::kDownload},
    {"/upload/storage/v1/b", Root::kUpload},
    {"/resumable/upload/storage/v1/b", Root::kUpload}};

// Which method `call` makes and on what: its method, bucket, object and media set.
void Classify(FakeGcs::Call& call) {
  const httplib::Request& request = call.request;
  const std::string raw = request.target.substr(0, request.target.find('?'));
  call.method = "unknown";
  for (const auto& [prefix, root] : kRoots) {
    if (!raw.starts_with(prefix)) continue;
    const std::string rest = raw.substr(strlen(prefix));
    const std::string& verb = request.method;
    if (rest.empty()) {
      if (root != Root::kApi) return;
      if (verb == "GET") call.method = "buckets.list";
      if (verb == "POST") call.method = "buckets.insert";
      return;
    }
    if (rest[0] != '/') continue;  // "/storage/v1/bx": another root's path, or none
    const size_t slash = rest.find('/', 1);
    call.bucket = UriDecode(rest.substr(1, slash == std::string::npos ? slash : slash - 1));
    const std::string after = slash == std::string::npos ? "" : rest.substr(slash);
    const bool has_object = after.starts_with("/o/") && after.size() > 3;
    if (has_object) call.object = UriDecode(after.substr(3));
    if (root == Root::kDownload) {
      if (has_object && verb == "GET") call.method = "objects.get";
      call.media = true;
    } else if (root == Root::kUpload) {
      if (after != "/o") return;
      if (verb == "POST") call.method = "objects.insert";
      if (verb == "PUT" && request.has_param("upload_id")) call.method = "objects.insert.chunk";
    } else if (after.empty()) {
      if (verb == "GET") call.method = "buckets.get";
      if (verb == "DELETE") call.method = "buckets.delete";
    } else if (after == "/storageLayout" && verb == "GET") {
      call.method = "buckets.getStorageLayout";
    } else if (after == "/managedFolders" && verb == "GET") {
      call.method = "managedFolders.list";
    } else if (after == "/o" && verb == "GET") {
      call.method = "objects.list";
    } else if (has_object) {
      if (verb == "GET") call.method = "objects.get";
      if (verb == "DELETE") call.method = "objects.delete";
      call.media = request.get_param_value("alt") == "media";
    }
    return;
  }
}

// The IAM permission a method needs, for the 401's message.
std::string PermissionOf(const std::string& method) {
  if (method == "objects.insert" || method == "objects.insert.chunk") {
    return "storage.objects.create";
  }
  if (method == "buckets.insert") return "storage.buckets.create";
  if (method.starts_with("objects.") || method.starts_with("buckets.")) return "storage." + method;
  return "storage.objects.list";
}

// A list page token: where the last page stopped ("k" after an object, "p" after a prefix, all
// of whose objects are passed).
std::string PageToken(char kind, const std::string& marker) {
  return Base64UrlEncode(std::string(1, kind) + marker);
}

void BucketNotFound(httplib::Response& response) {
  wire::Fail(response, 404, "notFound", "The specified bucket does not exist.");
}

void ObjectNotFound(httplib::Response& response, const FakeGcs::Call& call) {
  wire::Fail(response, 404, "notFound", "No such object: " + call.bucket + "/" + call.object);
}

void PreconditionFailed(httplib::Response& response) {
  wire::Fail(response, 412, "conditionNotMet",
             "At least one of the pre-conditions you specified did not hold.");
}

}  // namespace

FakeGcs::FakeGcs(FakeGcsOptions options, FakeGcsHost host)
    : options_(std::move(options)), host_(std::move(host)) {
  if (options_.data_dir.empty()) {
    std::random_device random;
    owned_data_dir_ = fs::temp_directory_path() /
                      ("fake-gcs-" + std::to_string(getpid()) + "-" + std::to_string(random()));
    options_.data_dir = owned_data_dir_;
  }
  fs::create_directories(options_.data_dir);
}

FakeGcs::~FakeGcs() {
  if (!owned_data_dir_.empty()) {
    std::error_code ignored;
    fs::remove_all(owned_data_dir_, ignored);
  }
}

void FakeGcs::Route(httplib::Server& server) {
  auto plain = [this](const httplib::Request& request, httplib::Response& response) {
    Handle(request, response, nullptr);
    ApplyRangesOnlyToObjects(request, response);
  };
  auto streamed = [this](const httplib::Request& request, httplib::Response& response,
                         const httplib::ContentReader& reader) {
    Handle(request, response, &reader);
  };
  // [\s\S]: a decoded object name may hold a line break, which '.' does not match.
  server.Get(R"(/(download/)?storage/v1/[\s\S]*)", plain);
  server.Post(R"(/storage/v1/[\s\S]*)", plain);
  server.Delete(R"(/storage/v1/[\s\S]*)", plain);
  server.Post(R"(/(resumable/)?upload/storage/v1/[\s\S]*)", streamed);
  server.Put(R"(/(resumable/)?upload/storage/v1/[\s\S]*)", streamed);
}

void FakeGcs::Handle(const httplib::Request& request, httplib::Response& response,
                     const httplib::ContentReader* reader) {
  Call call{request, reader, "", "", "", false};
  Classify(call);
  {
    std::lock_guard lock(mu_);
    response.set_header("X-GUploader-UploadID", "fake-gcs-" + std::to_string(next_id_++));
  }
  if (!Admit(call, response)) return wire::Drain(reader);
  if (call.method == "unknown") {
    wire::Drain(reader);
    return wire::Fail(
        response, 404, "notFound",
        "Not Found: the fake Cloud Storage does not serve " + request.method + " " + request.path);
  }
  using Handler = void (FakeGcs::*)(Call&, httplib::Response&);
  static const std::map<std::string, Handler> kHandlers = {
      {"buckets.insert", &FakeGcs::InsertBucket},
      {"buckets.list", &FakeGcs::ListBuckets},
      {"buckets.get", &FakeGcs::BucketCall},
      {"buckets.delete", &FakeGcs::BucketCall},
      {"buckets.getStorageLayout", &FakeGcs::BucketCall},
      {"managedFolders.list", &FakeGcs::BucketCall},
      {"objects.list", &FakeGcs::ListObjects},
      {"objects.get", &FakeGcs::GetObject},
      {"objects.delete", &FakeGcs::DeleteObject},
      {"objects.insert", &FakeGcs::InsertObject},
      {"objects.insert.chunk", &FakeGcs::PutChunk}};
  (this->*kHandlers.at(call.method))(call, response);
}

bool FakeGcs::Admit(Call& call, httplib::Response& response) {
  const std::string authorization = call.request.get_header_value("Authorization");
  const bool anonymous = authorization.empty() && options_.allow_anonymous;
  if (!anonymous && !host_.authorized(authorization)) {
    const std::string permission = PermissionOf(call.method);
    wire::Fail(response, 401, "required",
               authorization.empty()
                   ? "Anonymous caller does not have " + permission +
                         " access to the Google Cloud Storage bucket. Permission '" + permission +
                         "' denied on resource (or it may not exist)."
                   : "Invalid Credentials");
    return false;
  }
  if (const auto fault = host_.admit(call.method, call.request.path)) {
    wire::Fail(response, fault->first, fault->second, "scripted fault: " + fault->second);
    return false;
  }
  return true;
}

json FakeGcs::BucketJson(const std::string& base, const std::string& name, const Bucket& bucket) {
  return {{"kind", "storage#bucket"},
          {"selfLink", base + "/storage/v1/b/" + name},
          {"id", name},
          {"name", name},
          {"projectNumber", "123456789012"},
          {"metageneration", "1"},
          {"location", "US"},
          {"locationType", "multi-region"},
          {"storageClass", "STANDARD"},
          {"etag", "CAE="},
          {"timeCreated", wire::Rfc3339(bucket.created)},
          {"updated", wire::Rfc3339(bucket.created)}};
}

json FakeGcs::ObjectJson(const std::string& base, const std::string& bucket,
                         const std::string& name, const Object& object) {
  const std::string encoded = UriEncode(name, false);
  const std::string generation = std::to_string(object.generation);
  return {{"kind", "storage#object"},
          {"id", bucket + "/" + name + "/" + generation},
          {"selfLink", base + "/storage/v1/b/" + bucket + "/o/" + encoded},
          {"mediaLink", base + "/download/storage/v1/b/" + bucket + "/o/" + encoded +
                            "?generation=" + generation + "&alt=media"},
          {"name", name},
          {"bucket", bucket},
          {"generation", generation},
          {"metageneration", "1"},
          {"contentType", object.content_type},
          {"storageClass", "STANDARD"},
          {"size", std::to_string(object.size)},
          {"md5Hash", Base64Encode(object.md5)},
          {"crc32c", wire::Crc32cBase64(object.crc32c)},
          {"etag", Base64Encode(generation + "/1")},
          {"timeCreated", wire::Rfc3339(object.created)},
          {"updated", wire::Rfc3339(object.created)},
          {"timeStorageClassUpdated", wire::Rfc3339(object.created)}};
}

void FakeGcs::InsertBucket(Call& call, httplib::Response& response) {
  static const std::regex kName(R"([a-z0-9][-a-z0-9_.]{1,61}[a-z0-9])");
  const json body = json::parse(call.request.body, nullptr, false);
  const std::string name =
      body.is_object() && body.contains("name") && body["name"].is_string() ? body["name"] : "";
  if (name.empty()) return wire::Fail(response, 400, "required", "Required");
  if (!std::regex_match(name, kName)) {
    return wire::Fail(response, 400, "invalid", "Invalid bucket name: '" + name + "'");
  }
  const std::string base = host_.base_url();
  std::lock_guard lock(mu_);
  auto [it, inserted] = buckets_.try_emplace(name, Bucket{wire::Clock::now(), {}});
  if (!inserted) {
    return wire::Fail(
        response, 409, "conflict",
        "Your previous request to create the named bucket succeeded and you already own "
        "it.");
  }
  wire::Reply(response, 200, BucketJson(base, name, it->second));
}

void FakeGcs::ListBuckets(Call& call, httplib::Response& response) {
  (void)call;
  const std::string base = host_.base_url();
  json reply = {{"kind", "storage#buckets"}};
  std::lock_guard lock(mu_);
  for (const auto& [name, bucket] : buckets_)
    reply["items"].push_back(BucketJson(base, name, bucket));
  wire::Reply(response, 200, reply);
}

void FakeGcs::BucketCall(Call& call, httplib::Response& response) {
  const std::string base = host_.base_url();
  std::lock_guard lock(mu_);
  auto it = buckets_.find(call.bucket);
  if (it == buckets_.end()) return BucketNotFound(response);
  if (call.method == "buckets.get")
    return wire::Reply(response, 200, BucketJson(base, it->first, it->second));
  if (call.method == "buckets.getStorageLayout") {
    return wire::Reply(response, 200,
                       {{"kind", "storage#storageLayout"},
                        {"bucket", call.bucket},
                        {"location", "US"},
                        {"locationType", "multi-region"}});
  }
  if (call.method == "managedFolders.list") {
    return wire::Reply(response, 200, {{"kind", "storage#managedFolders"}});
  }
  if (!it->second.objects.empty()) {  // buckets.delete
    return wire::Fail(response, 409, "conflict", "The bucket you tried to delete is not empty.");
  }
  buckets_.erase(it);
  response.status = 204;
}

void FakeGcs::ListObjects(Call& call, httplib::Response& response) {
  const httplib::Request& request = call.request;
  const std::string prefix = request.get_param_value("prefix");
  const std::string delimiter = request.get_param_value("delimiter");
  const std::string start_offset = request.get_param_value("startOffset");
  const std::string end_offset = request.get_param_value("endOffset");
  size_t page = options_.page_size;
  if (request.has_param("maxResults")) {
    const std::optional<int64_t> max_results = wire::IntParam(request, "maxResults");
    if (!max_results || *max_results < 0) {
      return wire::Fail(response, 400, "invalid",
                        "Invalid value for maxResults: " + request.get_param_value("maxResults"));
    }
    if (*max_results > 0) page = std::min(page, static_cast<size_t>(*max_results));
  }
  page = std::max<size_t>(page, 1);
  char kind = 'k';
  std::string marker;
  if (const std::string token = request.get_param_value("pageToken"); !token.empty()) {
    Result<std::string> decoded = Base64UrlDecode(token);
    if (!decoded.ok() || decoded->empty() || ((*decoded)[0] != 'k' && (*decoded)[0] != 'p')) {
      return wire::Fail(response, 400, "invalid", "Invalid page token: " + token);
    }
    kind = (*decoded)[0];
    marker = decoded->substr(1);
  }
  const std::string base = host_.base_url();
  json items = json::array();
  json prefixes = json::array();
  std::string next_token;
  bool truncated = false;
  {
    std::lock_guard lock(mu_);
    auto bucket = buckets_.find(call.bucket);
    if (bucket == buckets_.end()) return BucketNotFound(response);
    const auto& objects = bucket->second.objects;
    const std::string from = std::max(prefix, start_offset);
    auto it = objects.lower_bound(from);
    if (!marker.empty() && marker >= from) {
      it = kind == 'k' ? objects.upper_bound(marker) : objects.lower_bound(marker);
    }
    truncated = ListPage(
                    objects, it, {prefix, delimiter, kind == 'p' ? marker : "", end_offset, page},
                    [&](const std::string& name, const Object& object) {
                      items.push_back(ObjectJson(base, call.bucket, name, object));
                      next_token = PageToken('k', name);
                    },
                    [&](const std::string& common) {
                      prefixes.push_back(common);
                      next_token = PageToken('p', common);
                    })
                    .truncated;
  }
  json reply = {{"kind", "storage#objects"}};
  if (!items.empty()) reply["items"] = std::move(items);
  if (!prefixes.empty()) reply["prefixes"] = std::move(prefixes);
  if (truncated) reply["nextPageToken"] = next_token;
  wire::Reply(response, 200, reply);
}

void FakeGcs::GetObject(Call& call, httplib::Response& response) {
  const std::string base = host_.base_url();
  std::optional<Object> object;
  SharedFd fd;
  {
    std::lock_guard lock(mu_);
    auto bucket = buckets_.find(call.bucket);
    if (bucket == buckets_.end()) return BucketNotFound(response);
    auto it = bucket->second.objects.find(call.object);
    if (it != bucket->second.objects.end()) {
      object = it->second;
      if (call.media) fd = OpenShared(object->file);  // under the lock: this generation's bytes
    }
  }
  const std::optional<int64_t> generation = wire::IntParam(call.request, "generation");
  if (!object || (generation && *generation != object->generation)) {
    return ObjectNotFound(response, call);
  }
  const std::optional<int64_t> match = wire::IntParam(call.request, "ifGenerationMatch");
  if (match && *match != object->generation) return PreconditionFailed(response);
  if (!call.media)
    return wire::Reply(response, 200, ObjectJson(base, call.bucket, call.object, *object));
  if (*fd < 0) return wire::Fail(response, 500, "backendError", "the fake lost the object's bytes");
  response.set_header("X-Goog-Generation", std::to_string(object->generation));
  response.set_header("X-Goog-Metageneration", "1");
  response.set_header("X-Goog-Hash", "crc32c=" + wire::Crc32cBase64(object->crc32c) +
                                         ",md5=" + Base64Encode(object->md5));
  response.set_header("X-Goog-Stored-Content-Length", std::to_string(object->size));
  response.set_header("X-Goog-Stored-Content-Encoding", "identity");
  response.set_header("X-Goog-Storage-Class", "STANDARD");
  response.set_header("ETag", "\"" + Base64Encode(object->md5) + "\"");
  response.set_header("Accept-Ranges", "bytes");
  ServeFile(response, fd, object->size, object->content_type);  // 200, or 206 for a Range
}

void FakeGcs::DeleteObject(Call& call, httplib::Response& response) {
  const std::optional<int64_t> generation = wire::IntParam(call.request, "generation");
  const std::optional<int64_t> match = wire::IntParam(call.request, "ifGenerationMatch");
  std::lock_guard lock(mu_);
  auto bucket = buckets_.find(call.bucket);
  if (bucket == buckets_.end()) return BucketNotFound(response);
  auto it = bucket->second.objects.find(call.object);
  if (it == bucket->second.objects.end() || (generation && *generation != it->second.generation)) {
    return ObjectNotFound(response, call);
  }
  if (match && *match != it->second.generation) return PreconditionFailed(response);
  fs::remove(it->second.file);
  bucket->second.objects.erase(it);
  response.status = 204;
}

bool FakeGcs::HasBucket(const std::string& name) {
  std::lock_guard lock(mu_);
  return buckets_.contains(name);
}

fs::path FakeGcs::NewDataFile() {
  std::lock_guard lock(mu_);
  return options_.data_dir / ("object-" + std::to_string(next_id_++));
}

std::pair<int, json> FakeGcs::Commit(const std::string& bucket, const std::string& name,
                                     Object object, std::optional<int64_t> if_generation_match) {
  const std::string base = host_.base_url();
  std::lock_guard lock(mu_);
  auto it = buckets_.find(bucket);
  if (it == buckets_.end()) {
    fs::remove(object.file);
    return {404, wire::ErrorJson(404, "notFound", "The specified bucket does not exist.")};
  }
  auto& objects = it->second.objects;
  auto current = objects.find(name);
  const int64_t generation = current == objects.end() ? 0 : current->second.generation;
  if (if_generation_match && *if_generation_match != generation) {
    fs::remove(object.file);
    return {412, wire::ErrorJson(412, "conditionNotMet",
                                 "At least one of the pre-conditions you specified did not hold.")};
  }
  // Generations are microseconds since the epoch, as Cloud Storage's, and always grow.
  object.created = wire::Clock::now();
  const int64_t micros =
      std::chrono::duration_cast<std::chrono::microseconds>(object.created.time_since_epoch())
          .count();
  last_generation_ = std::max(last_generation_ + 1, micros);
  object.generation = last_generation_;
  if (current != objects.end()) {
    fs::remove(current->second.file);
    current->second = object;
  } else {
    objects.emplace(name, object);
  }
  return {200, ObjectJson(base, bucket, name, object)};
}

void FakeGcs::CreateBucket(const std::string& name) {
  std::lock_guard lock(mu_);
  buckets_.try_emplace(name, Bucket{wire::Clock::now(), {}});
}

void FakeGcs::PutObject(const std::string& bucket, const std::string& name,
                        const std::string& bytes) {
  CreateBucket(bucket);
  Object object;
  object.file = NewDataFile();
  object.content_type = "application/octet-stream";
  std::ofstream(object.file, std::ios::binary) << bytes;
  wire::Hashes hashes;
  hashes.Update(bytes.data(), bytes.size());
  hashes.Finish(object);
  Commit(bucket, name, object, std::nullopt);
}

std::vector<std::string> FakeGcs::ObjectNames(const std::string& bucket,
                                              const std::string& prefix) {
  std::lock_guard lock(mu_);
  std::vector<std::string> names;
  auto it = buckets_.find(bucket);
  if (it == buckets_.end()) return names;
  for (auto object = it->second.objects.lower_bound(prefix);
       object != it->second.objects.end() && object->first.starts_with(prefix); ++object) {
    names.push_back(object->first);
  }
  return names;
}

std::optional<std::string> FakeGcs::ObjectBytes(const std::string& bucket,
                                                const std::string& name) {
  SharedFd fd;
  uint64_t size = 0;
  {
    std::lock_guard lock(mu_);
    auto it = buckets_.find(bucket);
    if (it == buckets_.end()) return std::nullopt;
    auto object = it->second.objects.find(name);
    if (object == it->second.objects.end()) return std::nullopt;
    fd = OpenShared(object->second.file);
    size = object->second.size;
  }
  std::string bytes(size, '\0');
  size_t done = 0;
  while (*fd >= 0 && done < size) {
    const ssize_t got = ::pread(*fd, bytes.data() + done, size - done, static_cast<off_t>(done));
    if (got <= 0) break;
    done += static_cast<size_t>(got);
  }
  if (done < size) return std::nullopt;
  return bytes;
}

std::optional<json> FakeGcs::Admin(const std::string& what, const httplib::Request& request) {
  if (what == "buckets" && request.method == "POST") {
    const json body = json::parse(request.body, nullptr, false);
    const std::string name = body.is_object() ? body.value("name", "") : "";
    if (name.empty()) return json{{"ok", false}, {"error", "a bucket needs a name"}};
    CreateBucket(name);
    return json{{"ok", true}};
  }
  if (what == "objects" && request.method == "GET") {
    const std::string bucket = request.get_param_value("bucket");
    json objects = json::array();
    std::lock_guard lock(mu_);
    auto it = buckets_.find(bucket);
    if (it == buckets_.end()) return objects;
    const std::string prefix = request.get_param_value("prefix");
    for (const auto& [name, object] : it->second.objects) {
      if (name.starts_with(prefix)) objects.push_back({{"name", name}, {"size", object.size}});
    }
    return objects;
  }
  return std::nullopt;
}

}  // namespace det::testing
