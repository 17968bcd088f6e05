#include "agent/docker/docker_client.h"

#include <cstdio>

#include "common/base64.h"

namespace det::agent {
namespace {

// The API versions this client speaks: 1.41 (Docker 20.10) has everything used here; 1.47
// (Docker 27) is the newest it was checked against. Docker 29 refuses versions below 1.44, so the
// version is negotiated, not pinned.
constexpr std::pair<int, int> kOldestApi{1, 41};
constexpr std::pair<int, int> kNewestApi{1, 47};

// "1.47" → {1, 47}; {0, 0} when unreadable.
std::pair<int, int> ParseApiVersion(const std::string& text) {
  int major = 0, minor = 0;
  if (std::sscanf(text.c_str(), "%d.%d", &major, &minor) != 2) return {0, 0};
  return {major, minor};
}

std::string ApiVersionText(std::pair<int, int> version) {
  return std::to_string(version.first) + "." + std::to_string(version.second);
}

Status EngineError(long status, const std::string& body, const std::string& what) {
  const nlohmann::json parsed = nlohmann::json::parse(body, nullptr, false);
  std::string message = parsed.is_object() ? parsed.value("message", "") : "";
  if (message.empty()) message = "HTTP " + std::to_string(status);
  message = what + ": " + message;
  switch (status) {
    case 304:
    case 409:
      return message.find("already in use") != std::string::npos ? AlreadyExists(message)
                                                                 : FailedPrecondition(message);
    case 400:
      return InvalidArgument(message);
    case 401:
    case 403:
      return PermissionDenied(message);
    case 404:
      return NotFound(message);
    default:
      return Unavailable(message);
  }
}

// The "Labels" of a container's JSON; labels that are not text are left out.
std::map<std::string, std::string> LabelsOf(const nlohmann::json& json) {
  std::map<std::string, std::string> labels;
  if (!json.contains("Labels") || !json["Labels"].is_object()) return labels;
  for (const auto& [key, value] : json["Labels"].items()) {
    if (value.is_string()) labels[key] = value.get<std::string>();
  }
  return labels;
}

// An image reference in a path, as the engine's route takes it: "/" and ":" as they are.
std::string ImagePath(const std::string& image) {
  std::string path = UriEncode(image, true);
  for (size_t at; (at = path.find("%3A")) != std::string::npos;) path.replace(at, 3, ":");
  return path;
}

}  // namespace

void DockerStreamDecoder::Feed(std::string_view bytes) {
  pending_.append(bytes);
  size_t at = 0;
  while (pending_.size() - at >= 8) {
    const auto* header = reinterpret_cast<const unsigned char*>(pending_.data() + at);
    const size_t length = (static_cast<size_t>(header[4]) << 24) |
                          (static_cast<size_t>(header[5]) << 16) |
                          (static_cast<size_t>(header[6]) << 8) | static_cast<size_t>(header[7]);
    if (pending_.size() - at - 8 < length) break;
    on_frame_(header[0], std::string_view(pending_).substr(at + 8, length));
    at += 8 + length;
  }
  pending_.erase(0, at);
}

std::pair<std::string, std::string> SplitImageReference(const std::string& image) {
  if (image.find('@') != std::string::npos) return {image, ""};
  const size_t colon = image.rfind(':');
  const size_t slash = image.rfind('/');
  if (colon == std::string::npos || (slash != std::string::npos && colon < slash)) {
    return {image, "latest"};
  }
  return {image.substr(0, colon), image.substr(colon + 1)};
}

DockerClient::DockerClient(std::string socket) : socket_(std::move(socket)) {}

HttpRequest DockerClient::Request(const std::string& method, const std::string& path) const {
  HttpRequest request;
  request.method = method;
  request.url = "http://docker/v" + api_version_ + path;
  request.unix_socket = socket_;
  request.timeout = std::chrono::seconds(60);
  return request;
}

Result<HttpResponse> DockerClient::Send(HttpRequest request, const std::string& what) {
  if (api_version_.empty()) {  // built before the version was agreed: its URL has "/v/"
    DET_RETURN_IF_ERROR(Negotiate());
    request.url = Request(request.method, request.url.substr(request.url.find("/v/") + 2)).url;
  }
  Result<HttpResponse> response = http_.Send(request);
  if (!response.ok()) {
    return Unavailable(what + ": no Docker engine answers on " + socket_ + " (" +
                       response.status().message() + ")");
  }
  if (response->status >= 300) return EngineError(response->status, response->body, what);
  return response;
}

Status DockerClient::Negotiate() {
  HttpRequest request = Request("GET", "/version");
  request.url = "http://docker/version";  // unversioned: any engine answers it
  Result<HttpResponse> response = http_.Send(request);
  if (!response.ok()) {
    return Unavailable("no Docker engine answers on " + socket_ + " (" +
                       response.status().message() + ")");
  }
  if (response->status >= 300) {
    return EngineError(response->status, response->body, "the engine's version");
  }
  const nlohmann::json version = nlohmann::json::parse(response->body, nullptr, false);
  if (!version.is_object()) return Unavailable("the engine's version: not JSON");
  auto text = [&](const char* key, const char* otherwise) {
    return version.contains(key) && version[key].is_string() ? version[key].get<std::string>()
                                                             : std::string(otherwise);
  };
  const auto newest = ParseApiVersion(text("ApiVersion", ""));
  const auto oldest = ParseApiVersion(text("MinAPIVersion", "1.24"));
  const auto chosen = std::min(newest, kNewestApi);
  if (chosen < kOldestApi || chosen < oldest) {
    return FailedPrecondition("the Docker engine on " + socket_ + " speaks API versions " +
                              ApiVersionText(oldest) + " to " + ApiVersionText(newest) +
                              "; the agent needs one from " + ApiVersionText(kOldestApi) + " to " +
                              ApiVersionText(kNewestApi));
  }
  api_version_ = ApiVersionText(chosen);
  return Status::Ok();
}

Result<std::string> DockerClient::Ping() {
  api_version_.clear();
  DET_RETURN_IF_ERROR(Negotiate());
  return api_version_;
}

Result<bool> DockerClient::ImageExists(const std::string& image) {
  Result<HttpResponse> response =
      Send(Request("GET", "/images/" + ImagePath(image) + "/json"), "image " + image);
  if (response.ok()) return true;
  if (response.status().code() == StatusCode::kNotFound) return false;
  return response.status();
}

Status DockerClient::Pull(const std::string& image, const std::string& registry_auth_json,
                          const std::function<bool(const PullProgress&)>& progress) {
  const auto [name, tag] = SplitImageReference(image);
  std::string path = "/images/create?fromImage=" + UriEncode(name, false);
  if (!tag.empty()) path += "&tag=" + UriEncode(tag, false);
  HttpRequest request = Request("POST", path);
  request.timeout = Duration::zero();  // a large image takes as long as it takes
  if (!registry_auth_json.empty()) {
    request.headers.emplace_back("X-Registry-Auth", Base64UrlEncodePadded(registry_auth_json));
  }
  std::map<std::string, std::pair<int64_t, int64_t>> layers;  // id → (current, total)
  std::string pending;
  std::string failed;
  bool abandoned = false;
  request.on_body = [&](std::string_view bytes) {
    pending.append(bytes);
    for (size_t nl; (nl = pending.find('\n')) != std::string::npos; pending.erase(0, nl + 1)) {
      const nlohmann::json line = nlohmann::json::parse(pending.substr(0, nl), nullptr, false);
      if (!line.is_object()) continue;
      if (line.contains("error")) {
        failed = line["error"].is_string() ? line["error"].get<std::string>() : line.dump();
        continue;
      }
      PullProgress report;
      try {
        report.status = line.value("status", "");
        const nlohmann::json detail = line.value("progressDetail", nlohmann::json::object());
        if (line.contains("id") && detail.is_object() && detail.contains("total")) {
          layers[line.value("id", "")] = {detail.value("current", int64_t{0}),
                                          detail.value("total", int64_t{0})};
        }
      } catch (const nlohmann::json::exception&) {
        continue;  // a progress line of another shape: progress is only shown
      }
      for (const auto& [id, layer] : layers) {
        report.current += layer.first;
        report.total += layer.second;
      }
      if (progress && !progress(report)) abandoned = true;
    }
    return !abandoned;
  };
  Result<HttpResponse> response = Send(request, "pulling " + image);
  if (abandoned) return Unavailable("pulling " + image + ": abandoned by its reader");
  if (!response.ok()) return response.status();
  if (!failed.empty()) return NotFound("pulling " + image + ": " + failed);
  return Status::Ok();
}

Result<std::string> DockerClient::Create(const std::string& name, const nlohmann::json& body) {
  HttpRequest request = Request("POST", "/containers/create?name=" + UriEncode(name, false));
  request.headers = {{"Content-Type", "application/json"}};
  request.body = body.dump();
  DET_ASSIGN_OR_RETURN(HttpResponse response, Send(request, "creating container " + name));
  const nlohmann::json created = nlohmann::json::parse(response.body, nullptr, false);
  if (!created.is_object() || !created.contains("Id") || !created["Id"].is_string() ||
      created["Id"].get<std::string>().empty()) {
    return Unavailable("creating container " + name + ": the engine gave no id");
  }
  return created["Id"].get<std::string>();
}

Status DockerClient::Start(const std::string& id) {
  Result<HttpResponse> response =
      Send(Request("POST", "/containers/" + id + "/start"), "starting container " + id);
  if (!response.ok() && response.status().code() != StatusCode::kFailedPrecondition) {
    return response.status();  // 304: it runs already, which is what was asked
  }
  return Status::Ok();
}

Result<ContainerState> DockerClient::Inspect(const std::string& id) {
  DET_ASSIGN_OR_RETURN(HttpResponse response,
                       Send(Request("GET", "/containers/" + id + "/json"), "container " + id));
  const nlohmann::json json = nlohmann::json::parse(response.body, nullptr, false);
  if (!json.is_object()) return Unavailable("container " + id + ": not JSON");
  try {
    ContainerState state;
    state.id = json.value("Id", id);
    const nlohmann::json s = json.value("State", nlohmann::json::object());
    state.status = s.value("Status", "");
    state.running = s.value("Running", false);
    state.exit_code = s.value("ExitCode", 0);
    state.oom_killed = s.value("OOMKilled", false);
    state.error = s.value("Error", "");
    state.labels = LabelsOf(json.value("Config", nlohmann::json::object()));
    return state;
  } catch (const nlohmann::json::exception& e) {
    return Unavailable("container " + id + ": unexpected answer from the engine: " + e.what());
  }
}

Result<int> DockerClient::Wait(const std::string& id) {
  HttpRequest request = Request("POST", "/containers/" + id + "/wait?condition=not-running");
  request.timeout = Duration::zero();
  DET_ASSIGN_OR_RETURN(HttpResponse response, Send(request, "waiting for container " + id));
  const nlohmann::json reply = nlohmann::json::parse(response.body, nullptr, false);
  if (!reply.is_object() || !reply.contains("StatusCode") ||
      !reply["StatusCode"].is_number_integer()) {
    return Unavailable("waiting for container " + id + ": no StatusCode in " + response.body);
  }
  return reply["StatusCode"].get<int>();
}

Status DockerClient::Kill(const std::string& id, const std::string& signal) {
  Result<HttpResponse> response =
      Send(Request("POST", "/containers/" + id + "/kill?signal=" + signal),
           "signalling container " + id);
  return response.ok() || response.status().code() == StatusCode::kFailedPrecondition
             ? Status::Ok()  // 409: it does not run
             : response.status();
}

Status DockerClient::Stop(const std::string& id, int seconds) {
  HttpRequest request =
      Request("POST", "/containers/" + id + "/stop?t=" + std::to_string(std::max(0, seconds)));
  request.timeout = std::chrono::seconds(std::max(0, seconds) + 60);
  Result<HttpResponse> response = Send(request, "stopping container " + id);
  return response.ok() || response.status().code() == StatusCode::kFailedPrecondition
             ? Status::Ok()  // 304: it was stopped already
             : response.status();
}

Status DockerClient::Remove(const std::string& id) {
  Result<HttpResponse> response = Send(
      Request("DELETE", "/containers/" + id + "?force=true&v=true"), "removing container " + id);
  return response.ok() || response.status().code() == StatusCode::kNotFound ? Status::Ok()
                                                                            : response.status();
}

Result<std::vector<ContainerState>> DockerClient::List(const std::string& key,
                                                       const std::string& value) {
  const nlohmann::json filters = {{"label", {key + "=" + value}}};
  DET_ASSIGN_OR_RETURN(
      HttpResponse response,
      Send(Request("GET", "/containers/json?all=true&filters=" + UriEncode(filters.dump(), false)),
           "listing containers"));
  const nlohmann::json list = nlohmann::json::parse(response.body, nullptr, false);
  if (!list.is_array()) return Unavailable("listing containers: not a JSON list");
  std::vector<ContainerState> containers;
  try {
    for (const nlohmann::json& item : list) {
      if (!item.is_object()) continue;
      ContainerState state;
      state.id = item.value("Id", "");
      state.status = item.value("State", "");
      state.running = state.status == "running";
      state.labels = LabelsOf(item);
      containers.push_back(std::move(state));
    }
  } catch (const nlohmann::json::exception& e) {
    return Unavailable(std::string("listing containers: unexpected answer from the engine: ") +
                       e.what());
  }
  return containers;
}

Status DockerClient::Logs(const std::string& id, const std::string& since,
                          const std::function<bool(int, std::string_view)>& on_frame) {
  std::string path =
      "/containers/" + id + "/logs?follow=true&stdout=true&stderr=true&timestamps=true";
  if (!since.empty()) path += "&since=" + since;
  HttpRequest request = Request("GET", path);
  request.timeout = Duration::zero();
  bool stopped = false;
  DockerStreamDecoder decoder([&](int stream, std::string_view data) {
    if (!stopped && !on_frame(stream, data)) stopped = true;
  });
  request.on_body = [&](std::string_view bytes) {
    decoder.Feed(bytes);
    return !stopped;
  };
  Result<HttpResponse> response = Send(request, "the output of container " + id);
  if (stopped) return Status::Ok();
  return response.ok() ? Status::Ok() : response.status();
}

}  // namespace det::agent
