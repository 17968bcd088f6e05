#include "cloud_gcp/compute_client.h"

#include <cstdio>
#include <ctime>
#include <limits>
#include <random>
#include <set>

namespace det::gcp {
namespace {

constexpr const char* kDefaultEndpoint = "https://compute.googleapis.com/compute/v1/";

const std::set<std::string> kThrottlingCodes = {"rateLimitExceeded", "userRateLimitExceeded",
                                                "RATE_LIMIT_EXCEEDED",
                                                "RESOURCE_OPERATION_RATE_EXCEEDED"};
const std::set<std::string> kQuotaCodes = {"QUOTA_EXCEEDED", "quotaExceeded", "limitExceeded"};
const std::set<std::string> kAuthCodes = {
    "forbidden",         "insufficientPermissions", "accessNotConfigured", "authError",
    "PERMISSION_DENIED", "UNAUTHENTICATED",         "PERMISSIONS_ERROR",   "NoCredentials"};
const std::set<std::string> kNotFoundCodes = {"notFound", "RESOURCE_NOT_FOUND", "NOT_FOUND"};
const std::set<std::string> kTransientCodes = {"backendError", "internalError", "INTERNAL_ERROR",
                                               "MalformedResponse"};

// The IAM permission each call needs (for the message of a permission error).
const std::map<std::string, std::string>& Permissions() {
  static const std::map<std::string, std::string> kPermissions = {
      {"instances.insert",
       "compute.instances.create (with compute.disks.create, compute.subnetworks.use, "
       "compute.instances.setMetadata, compute.instances.setLabels and, for a service account, "
       "iam.serviceAccounts.actAs)"},
      {"instances.list", "compute.instances.list"},
      {"instances.get", "compute.instances.get"},
      {"instances.delete", "compute.instances.delete"},
      {"zoneOperations.get", "compute.zoneOperations.get"},
      {"zoneOperations.wait", "compute.zoneOperations.get"},
  };
  return kPermissions;
}

std::string LastPathPart(const std::string& url) {
  const size_t slash = url.rfind('/');
  return slash == std::string::npos ? url : url.substr(slash + 1);
}

std::string Str(const nlohmann::json& json, const char* name) {
  auto it = json.find(name);
  return it != json.end() && it->is_string() ? it->get<std::string>() : "";
}

bool Bool(const nlohmann::json& json, const char* name) {
  auto it = json.find(name);
  return it != json.end() && it->is_boolean() && it->get<bool>();
}

// A whole number that fits a long, else 0 (a status code that is text, 1e300, 2^64).
long Long(const nlohmann::json& json, const char* name) {
  auto it = json.find(name);
  if (it == json.end() || !it->is_number_integer()) return 0;
  if (it->is_number_unsigned()) {
    const auto value = it->get<uint64_t>();
    return value <= static_cast<uint64_t>(std::numeric_limits<long>::max())
               ? static_cast<long>(value)
               : 0;
  }
  return static_cast<long>(it->get<int64_t>());
}

bool Retryable(const GceError& error) {
  return error.kind == GceErrorKind::kThrottled || error.kind == GceErrorKind::kTransient;
}

}  // namespace

GceInstance ReadGceInstance(const nlohmann::json& item) {
  GceInstance instance;
  instance.name = Str(item, "name");
  instance.id = Str(item, "id");
  instance.zone = LastPathPart(Str(item, "zone"));
  instance.machine_type = LastPathPart(Str(item, "machineType"));
  instance.status = Str(item, "status");
  if (auto labels = item.find("labels"); labels != item.end() && labels->is_object()) {
    for (const auto& [key, value] : labels->items()) {
      if (value.is_string()) instance.labels[key] = value.get<std::string>();
    }
  }
  if (auto scheduling = item.find("scheduling"); scheduling != item.end()) {
    instance.preemptible = Bool(*scheduling, "preemptible");
    instance.provisioning_model = Str(*scheduling, "provisioningModel");
  }
  if (auto nics = item.find("networkInterfaces");
      nics != item.end() && nics->is_array() && !nics->empty() && (*nics)[0].is_object()) {
    instance.internal_ip = Str((*nics)[0], "networkIP");
  }
  Result<WallTime> created = ParseRfc3339(Str(item, "creationTimestamp"));
  if (created.ok()) instance.created_at = *created;
  return instance;
}

GceOperation ReadGceOperation(const nlohmann::json& item, const std::string& method) {
  GceOperation operation;
  operation.name = Str(item, "name");
  operation.zone = LastPathPart(Str(item, "zone"));
  operation.operation_type = Str(item, "operationType");
  operation.target = LastPathPart(Str(item, "targetLink"));
  operation.status = Str(item, "status");
  auto error = item.find("error");
  if (error == item.end() || !error->is_object()) return operation;
  // The failure is the call the operation carried out (instances.insert), not the poll that
  // read it: the permission to name and the README's form are the insert's.
  const bool of_instance = Str(item, "targetLink").find("/instances/") != std::string::npos;
  const std::string failed_call = of_instance && !operation.operation_type.empty()
                                      ? "instances." + operation.operation_type
                                      : method;
  GceError failed{failed_call, "", "", Long(item, "httpErrorStatusCode"), GceErrorKind::kInvalid};
  for (const nlohmann::json& each : error->value("errors", nlohmann::json::array())) {
    if (!each.is_object()) continue;
    if (failed.code.empty()) failed.code = Str(each, "code");
    failed.message += (failed.message.empty() ? "" : "; ") + Str(each, "message");
  }
  if (failed.message.empty()) failed.message = Str(item, "httpErrorMessage");
  failed.kind = ClassifyGceError(failed.code, failed.http_status);
  operation.error = failed;
  return operation;
}

GceError ReadGceError(const std::string& method, const HttpResponse& response) {
  GceError error{method, "", "", response.status, GceErrorKind::kTransient};
  const nlohmann::json body = nlohmann::json::parse(response.body, nullptr, false);
  const nlohmann::json* document =
      body.is_object() && body.contains("error") && body["error"].is_object() ? &body["error"]
                                                                              : nullptr;
  if (document != nullptr) {
    error.message = Str(*document, "message");
    const nlohmann::json errors = document->value("errors", nlohmann::json::array());
    if (errors.is_array() && !errors.empty() && errors[0].is_object()) {
      error.code = Str(errors[0], "reason");
    }
    if (error.code.empty()) error.code = Str(*document, "status");
  }
  if (error.message.empty()) {
    error.message = "HTTP " + std::to_string(response.status) + " without an error document";
  }
  error.kind = ClassifyGceError(error.code, response.status);
  return error;
}

GceInstancePage ReadGceInstancePage(const nlohmann::json& page) {
  GceInstancePage read;
  for (const nlohmann::json& item : page.value("items", nlohmann::json::array())) {
    if (item.is_object()) read.instances.push_back(ReadGceInstance(item));
  }
  read.next_page_token = Str(page, "nextPageToken");
  return read;
}

GceErrorKind ClassifyGceError(const std::string& code, long http_status) {
  if (kThrottlingCodes.contains(code) || http_status == 429) return GceErrorKind::kThrottled;
  if (code.starts_with("ZONE_RESOURCE_POOL_EXHAUSTED") || code == "RESOURCE_POOL_EXHAUSTED") {
    return GceErrorKind::kCapacity;
  }
  if (kQuotaCodes.contains(code)) return GceErrorKind::kQuota;
  if (kAuthCodes.contains(code) || http_status == 401 || http_status == 403) {
    return GceErrorKind::kAuth;
  }
  if (kNotFoundCodes.contains(code) || http_status == 404) return GceErrorKind::kNotFound;
  if (kTransientCodes.contains(code) || http_status >= 500 || http_status == 0) {
    return GceErrorKind::kTransient;
  }
  return GceErrorKind::kInvalid;
}

std::string GceError::ToString() const {
  std::string text =
      "compute." + method + " failed: " + (code.empty() ? "" : code + ": ") + message;
  if (http_status != 0) text += " (HTTP " + std::to_string(http_status) + ")";
  if (kind == GceErrorKind::kAuth && code != "NoCredentials") {
    auto permission = Permissions().find(method);
    if (permission != Permissions().end()) {
      text += "; the autoscaler's service account needs " + permission->second +
              " (roles/compute.instanceAdmin.v1 has them)";
    }
  }
  return text;
}

std::string NewRequestId() {
  static thread_local std::mt19937_64 random{std::random_device{}()};
  const uint64_t high = random();
  const uint64_t low = random();
  char text[37];
  std::snprintf(text, sizeof(text), "%08x-%04x-4%03x-%04x-%012llx",
                static_cast<unsigned>(high >> 32), static_cast<unsigned>((high >> 16) & 0xffff),
                static_cast<unsigned>(high & 0x0fff),
                static_cast<unsigned>(0x8000 | ((low >> 48) & 0x3fff)),
                static_cast<unsigned long long>(low & 0xffffffffffffULL));
  return text;
}

Result<WallTime> ParseRfc3339(const std::string& text) {
  std::tm tm{};
  int consumed = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &consumed) != 6) {
    return InvalidArgument("\"" + text + "\" is not an RFC 3339 time");
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  std::string rest = text.substr(static_cast<size_t>(consumed));
  std::chrono::nanoseconds fraction{0};
  if (rest.starts_with(".")) {
    size_t digits = 1;
    while (digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits]))) ++digits;
    std::string nanos = rest.substr(1, std::min<size_t>(digits - 1, 9));
    nanos.resize(9, '0');
    fraction = std::chrono::nanoseconds(std::stoll(nanos));
    rest = rest.substr(digits);
  }
  int offset_minutes = 0;
  if (rest.size() == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':') {
    const int hours = std::atoi(rest.substr(1, 2).c_str());
    const int minutes = std::atoi(rest.substr(4, 2).c_str());
    offset_minutes = (rest[0] == '-' ? -1 : 1) * (hours * 60 + minutes);
  } else if (rest != "Z" && rest != "z") {
    return InvalidArgument("\"" + text + "\" is not an RFC 3339 time (no zone offset)");
  }
  const time_t seconds = timegm(&tm) - static_cast<time_t>(offset_minutes) * 60;
  // A WallTime counts nanoseconds in 64 bits: beyond this many seconds from 1970 it overflows.
  constexpr int64_t kLimit =
      std::chrono::duration_cast<std::chrono::seconds>(WallTime::duration::max()).count() - 1;
  if (seconds <= -kLimit || seconds >= kLimit) {
    return InvalidArgument("\"" + text + "\" is out of range (years 1678 to 2261)");
  }
  return WallTime{} +
         std::chrono::duration_cast<WallTime::duration>(std::chrono::seconds(seconds) + fraction);
}

ComputeClient::ComputeClient(ComputeClientOptions options,
                             std::shared_ptr<GcpCredentials> credentials, const Clock& clock)
    : options_(std::move(options)), credentials_(std::move(credentials)), clock_(clock) {
  endpoint_ = options_.endpoint_url.empty() ? kDefaultEndpoint : options_.endpoint_url;
  if (!endpoint_.ends_with('/')) endpoint_ += '/';
}

GceResult<nlohmann::json> ComputeClient::Attempt(const std::string& method,
                                                 const HttpRequest& request) {
  Result<HttpResponse> response = http_.Send(request);
  if (!response.ok()) {
    return GceError{method, "", response.status().message(), 0, GceErrorKind::kTransient};
  }
  if (response->status < 200 || response->status >= 300) return ReadGceError(method, *response);
  nlohmann::json body = nlohmann::json::parse(response->body, nullptr, false);
  if (body.is_discarded() || !body.is_object()) {
    return GceError{method, "MalformedResponse", "the response is not a JSON object",
                    response->status, GceErrorKind::kTransient};
  }
  return body;
}

GceResult<nlohmann::json> ComputeClient::Call(const std::string& method,
                                              const std::string& http_method,
                                              const std::string& path, const nlohmann::json& body,
                                              Duration timeout) {
  HttpRequest request;
  request.method = http_method;
  request.url = endpoint_ + "projects/" + options_.project + "/" + path;
  request.timeout = timeout == Duration::zero() ? options_.timeout : timeout;
  if (!body.is_null()) request.body = body.dump();
  bool token_renewed = false;
  for (int attempt = 0;; ++attempt) {
    Result<std::string> token = credentials_->Get();
    if (!token.ok()) {
      // Refused credentials need a person; a token endpoint or metadata server that is slow or
      // failing is retried like any transient failure.
      const StatusCode code = token.status().code();
      const bool refused =
          code == StatusCode::kUnauthenticated || code == StatusCode::kInvalidArgument;
      GceError error{method, refused ? "NoCredentials" : "TokenUnavailable",
                     token.status().message(), 0,
                     refused ? GceErrorKind::kAuth : GceErrorKind::kTransient};
      if (refused || attempt + 1 >= options_.retry.max_attempts) return error;
      clock_.SleepFor(BackoffDelay(options_.retry, attempt));
      continue;
    }
    request.headers = {{"Authorization", "Bearer " + *token}};
    if (!body.is_null()) request.headers.emplace_back("Content-Type", "application/json");
    GceResult<nlohmann::json> result = Attempt(method, request);
    if (result.ok()) return result;
    if (result.error().http_status == 401 && !token_renewed) {
      credentials_->Invalidate();  // revoked or expired early: one more try with a new token
      token_renewed = true;
      continue;
    }
    if (!Retryable(result.error()) || attempt + 1 >= options_.retry.max_attempts) return result;
    clock_.SleepFor(BackoffDelay(options_.retry, attempt));
  }
}

GceResult<GceOperation> ComputeClient::InsertInstance(const std::string& zone,
                                                      const nlohmann::json& instance,
                                                      const std::string& request_id) {
  const std::string method = "instances.insert";
  GceResult<nlohmann::json> answer =
      Call(method, "POST", "zones/" + zone + "/instances?requestId=" + request_id, instance);
  if (!answer.ok()) return answer.error();
  return ReadGceOperation(answer.value(), method);
}

GceResult<std::vector<GceInstance>> ComputeClient::ListInstances(const std::string& zone,
                                                                 const std::string& filter) {
  std::vector<GceInstance> instances;
  std::set<std::string> seen_tokens;
  std::string page_token;
  do {
    std::string path = "zones/" + zone + "/instances?maxResults=500";
    if (!filter.empty()) path += "&filter=" + UriEncode(filter, false);
    if (!page_token.empty()) path += "&pageToken=" + UriEncode(page_token, false);
    GceResult<nlohmann::json> page = Call("instances.list", "GET", path);
    if (!page.ok()) return page.error();
    GceInstancePage read = ReadGceInstancePage(page.value());
    for (GceInstance& instance : read.instances) instances.push_back(std::move(instance));
    page_token = std::move(read.next_page_token);
    if (!page_token.empty() && !seen_tokens.insert(page_token).second) break;  // a loop
  } while (!page_token.empty());
  return instances;
}

GceResult<GceInstance> ComputeClient::GetInstance(const std::string& zone,
                                                  const std::string& name) {
  GceResult<nlohmann::json> answer =
      Call("instances.get", "GET", "zones/" + zone + "/instances/" + name);
  if (!answer.ok()) return answer.error();
  return ReadGceInstance(answer.value());
}

GceResult<GceOperation> ComputeClient::DeleteInstance(const std::string& zone,
                                                      const std::string& name,
                                                      const std::string& request_id) {
  const std::string method = "instances.delete";
  GceResult<nlohmann::json> answer =
      Call(method, "DELETE", "zones/" + zone + "/instances/" + name + "?requestId=" + request_id);
  if (!answer.ok()) return answer.error();
  return ReadGceOperation(answer.value(), method);
}

GceResult<GceOperation> ComputeClient::GetOperation(const std::string& zone,
                                                    const std::string& name) {
  const std::string method = "zoneOperations.get";
  GceResult<nlohmann::json> answer = Call(method, "GET", "zones/" + zone + "/operations/" + name);
  if (!answer.ok()) return answer.error();
  return ReadGceOperation(answer.value(), method);
}

GceResult<GceOperation> ComputeClient::WaitOperation(const std::string& zone,
                                                     const std::string& name) {
  const std::string method = "zoneOperations.wait";
  GceResult<nlohmann::json> answer =
      Call(method, "POST", "zones/" + zone + "/operations/" + name + "/wait",
           nlohmann::json::object(), std::chrono::seconds(150));
  if (!answer.ok()) return answer.error();
  return ReadGceOperation(answer.value(), method);
}

}  // namespace det::gcp
