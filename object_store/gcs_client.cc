#include "object_store/gcs_client.h"

#include <nlohmann/json.hpp>
#include <set>

namespace det::object_store {
namespace {

constexpr const char* kDefaultEndpoint = "https://storage.googleapis.com";

const std::set<std::string> kThrottlingReasons = {"rateLimitExceeded", "userRateLimitExceeded",
                                                  "tooManyRequests"};
const std::set<std::string> kAuthReasons = {
    "required",      "authError",         "forbidden", "accessDenied", "insufficientPermissions",
    "NoCredentials", "userProjectMissing"};
// Refusals of one object, not of the caller: the others may still go.
const std::set<std::string> kObjectRefusalReasons = {"retentionPolicyNotMet", "objectUnderHold",
                                                     "conditionNotMet"};
const std::set<std::string> kTransientReasons = {"backendError", "internalError",
                                                 "MalformedResponse"};

ObjectStoreError GcsMalformed(const std::string& op, const std::string& what) {
  return ObjectStoreError{"gcs", op, "MalformedResponse",        what,
                          200,   "", CloudErrorKind::kTransient, ""};
}

std::string JsonText(const nlohmann::json& object, const char* name) {
  auto it = object.find(name);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

// objects.list sends sizes as decimal text (uint64 in JSON strings); a number is read too.
bool ReadSize(const nlohmann::json& item, uint64_t* size) {
  auto it = item.find("size");
  if (it == item.end()) return false;
  if (it->is_number_unsigned()) {
    *size = it->get<uint64_t>();
    return true;
  }
  if (!it->is_string()) return false;
  const std::string text = it->get<std::string>();
  if (text.empty() || text.size() > 20 ||
      text.find_first_not_of("0123456789") != std::string::npos) {
    return false;
  }
  try {
    *size = std::stoull(text);
  } catch (const std::exception&) {
    return false;  // above 2^64
  }
  return true;
}

bool Retryable(const ObjectStoreError& error) {
  return error.kind == CloudErrorKind::kThrottled || error.kind == CloudErrorKind::kTransient;
}

}  // namespace

CloudErrorKind ClassifyGcsError(const std::string& reason, long http_status) {
  if (kThrottlingReasons.contains(reason) || http_status == 429) return CloudErrorKind::kThrottled;
  if (kObjectRefusalReasons.contains(reason)) return CloudErrorKind::kInvalid;
  if (kAuthReasons.contains(reason) || http_status == 401 || http_status == 403) {
    return CloudErrorKind::kAuth;
  }
  if (reason == "notFound" || http_status == 404) return CloudErrorKind::kNotFound;
  if (kTransientReasons.contains(reason) || http_status >= 500 || http_status == 408 ||
      http_status == 0) {
    return CloudErrorKind::kTransient;
  }
  return CloudErrorKind::kInvalid;
}

std::string GcsEndpointFor(const std::string& emulator_host) {
  if (emulator_host.empty()) return kDefaultEndpoint;
  std::string endpoint =
      emulator_host.find("://") == std::string::npos ? "http://" + emulator_host : emulator_host;
  while (endpoint.ends_with('/')) endpoint.pop_back();
  return endpoint;
}

ObjectStoreError ReadGcsError(const std::string& op, long http_status, const std::string& body) {
  ObjectStoreError error{"gcs", op, "", "", http_status, "", CloudErrorKind::kTransient, ""};
  const nlohmann::json document = nlohmann::json::parse(body, nullptr, false);
  if (document.is_object() && document.contains("error") && document["error"].is_object()) {
    const nlohmann::json& inner = document["error"];
    error.message = JsonText(inner, "message");
    if (auto errors = inner.find("errors"); errors != inner.end() && errors->is_array() &&
                                            !errors->empty() && (*errors)[0].is_object()) {
      error.code = JsonText((*errors)[0], "reason");
    }
    if (error.code.empty()) error.code = JsonText(inner, "status");
  }
  if (error.message.empty()) {
    error.message = "HTTP " + std::to_string(http_status) + " without a Google error document";
  }
  error.kind = ClassifyGcsError(error.code, http_status);
  return error;
}

ObjectResult<ListPage> ReadGcsListPage(const std::string& body) {
  const nlohmann::json document = nlohmann::json::parse(body, nullptr, false);
  if (!document.is_object()) return GcsMalformed("objects.list", "the answer is not a JSON object");
  ListPage page;
  if (auto items = document.find("items"); items != document.end()) {
    if (!items->is_array()) return GcsMalformed("objects.list", "\"items\" is not a list");
    for (const nlohmann::json& item : *items) {
      ObjectInfo object;
      object.key = item.is_object() ? JsonText(item, "name") : "";
      if (object.key.empty()) return GcsMalformed("objects.list", "an object without a name");
      if (!ReadSize(item, &object.size)) {
        return GcsMalformed("objects.list", "object " + object.key + " has no valid size");
      }
      page.objects.push_back(std::move(object));
    }
  }
  page.next_token = JsonText(document, "nextPageToken");
  return page;
}

GcsClient::GcsClient(GcsClientOptions options, std::shared_ptr<gcp::GcpCredentials> credentials,
                     const Clock& clock)
    : options_(std::move(options)), credentials_(std::move(credentials)), clock_(clock) {
  if (options_.endpoint_url.empty()) options_.endpoint_url = kDefaultEndpoint;
  while (options_.endpoint_url.ends_with('/')) options_.endpoint_url.pop_back();
}

std::string GcsClient::ObjectsPath() const {
  return "/storage/v1/b/" + UriEncode(options_.bucket, false) + "/o";
}

std::string GcsClient::ObjectPath(const std::string& key) const {
  return ObjectsPath() + "/" + UriEncode(key, false);
}

ObjectResult<HttpResponse> GcsClient::Attempt(const Call& call) {
  HttpRequest request{
      call.method, options_.endpoint_url + call.path + (call.query.empty() ? "" : "?" + call.query),
      call.headers, call.body, options_.timeout};
  if (credentials_ != nullptr) {
    Result<std::string> token = credentials_->Get();
    if (!token.ok()) {
      const bool refused = token.status().code() == StatusCode::kUnauthenticated;
      return ObjectStoreError{"gcs",
                              call.op,
                              "NoCredentials",
                              credentials_->Describe() + ": " + token.status().message(),
                              0,
                              "",
                              refused ? CloudErrorKind::kAuth : CloudErrorKind::kTransient,
                              options_.bucket};
    }
    request.headers.emplace_back("Authorization", "Bearer " + *token);
  }
  if (!call.body.empty() || call.method == "POST") {
    request.headers.emplace_back("Content-Type", "application/octet-stream");
  }
  Result<HttpResponse> response = http_.Send(request);
  if (!response.ok()) {
    return ObjectStoreError{
        "gcs",          call.op, "", response.status().message(), 0, "", CloudErrorKind::kTransient,
        options_.bucket};
  }
  if (response->status >= 200 && response->status < 300) return std::move(*response);
  ObjectStoreError error = ReadGcsError(call.op, response->status, response->body);
  error.bucket = options_.bucket;
  if (auto it = response->headers.find("x-guploader-uploadid"); it != response->headers.end()) {
    error.request_id = it->second;
  }
  return error;
}

ObjectResult<HttpResponse> GcsClient::Send(const Call& call) {
  bool refreshed = false;
  for (int attempt = 0;;) {
    ObjectResult<HttpResponse> result = Attempt(call);
    if (result.ok()) return result;
    const ObjectStoreError& error = result.error();
    if (error.http_status == 401 && credentials_ != nullptr && !refreshed) {
      credentials_->Invalidate();  // revoked or expired early: one new token
      refreshed = true;
      continue;
    }
    if (!Retryable(error) || attempt + 1 >= options_.retry.max_attempts) return result;
    clock_.SleepFor(BackoffDelay(options_.retry, attempt));
    ++attempt;
  }
}

ObjectResult<std::vector<ObjectInfo>> GcsClient::List(const std::string& prefix) {
  const std::string path = ObjectsPath();
  return ListEveryPage(
      "gcs", "objects.list", options_.bucket,
      [&](const std::string& token) -> ObjectResult<ListPage> {
        std::string query = "fields=" + UriEncode("items(name,size),nextPageToken", false) +
                            "&maxResults=" + std::to_string(options_.page_size) +
                            "&prefix=" + UriEncode(prefix, false);
        if (!token.empty()) query += "&pageToken=" + UriEncode(token, false);
        ObjectResult<HttpResponse> response = Send({"objects.list", "GET", path, query, ""});
        if (!response.ok()) return response.error();
        return ReadGcsListPage(response->body);
      });
}

ObjectResult<size_t> GcsClient::Delete(const std::vector<std::string>& keys) {
  size_t left = 0;
  std::optional<ObjectStoreError> first;
  for (size_t i = 0; i < keys.size(); ++i) {
    ObjectResult<HttpResponse> response =
        Send({"objects.delete", "DELETE", ObjectPath(keys[i]), "", ""});
    if (response.ok() || response.error().kind == CloudErrorKind::kNotFound) continue;
    ++left;
    if (!first.has_value()) {
      first = response.error();
      first->message = "the first, " + keys[i] + ": " + first->message;
    }
    if (response.error().kind == CloudErrorKind::kAuth) {
      left += keys.size() - i - 1;  // refused once, refused for the rest: not asked again
      break;
    }
  }
  if (!first.has_value()) return keys.size();
  first->message = std::to_string(left) + " of " + std::to_string(keys.size()) +
                   " objects were not deleted; " + first->message;
  return *first;
}

ObjectResult<bool> GcsClient::Put(const std::string& key, const std::string& body) {
  ObjectResult<HttpResponse> response =
      Send({"objects.insert", "POST", "/upload" + ObjectsPath(),
            "uploadType=media&name=" + UriEncode(key, false), body});
  if (!response.ok()) return response.error();
  return true;
}

ObjectResult<std::string> GcsClient::Get(const std::string& key) {
  ObjectResult<HttpResponse> response =
      Send({"objects.get", "GET", ObjectPath(key), "alt=media", ""});
  if (!response.ok()) return response.error();
  return std::move(response->body);
}

ObjectResult<std::string> GcsClient::ReadRange(const std::string& key, uint64_t offset,
                                               uint64_t length) {
  if (length == 0) return std::string();
  ObjectResult<HttpResponse> response = Send({"objects.get",
                                              "GET",
                                              ObjectPath(key),
                                              "alt=media",
                                              "",
                                              {{"Range", ByteRange(offset, length)}}});
  if (!response.ok()) {
    if (response.error().http_status == 416) return std::string();  // at or past the end
    return response.error();
  }
  return PieceOfAnswer(response->status, std::move(response->body), offset, length);
}

}  // namespace det::object_store
