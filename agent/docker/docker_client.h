#pragma once

// The Docker Engine API (https://docs.docker.com/engine/api/) over its unix socket with libcurl:
// what the agent's docker runtime needs, no `docker` CLI. Errors carry the engine's message:
// NotFound (404: no such image or container), AlreadyExists (409: a name in use),
// FailedPrecondition (304/409 state conflicts), Unavailable (no engine on the socket, 5xx).
// Not thread-safe: one client per thread.

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "common/http_client.h"
#include "common/status.h"

namespace det::agent {

// Splits Docker's multiplexed stream (a container's output without a TTY): frames of an 8-byte
// header (stream 1 stdout, 2 stderr; then a big-endian length) and that many bytes. Feed it the
// bytes as they come; it calls `on_frame` for every whole frame.
class DockerStreamDecoder {
 public:
  using OnFrame = std::function<void(int stream, std::string_view data)>;
  explicit DockerStreamDecoder(OnFrame on_frame) : on_frame_(std::move(on_frame)) {}
  void Feed(std::string_view bytes);

 private:
  OnFrame on_frame_;
  std::string pending_;
};

// "repo/name:tag" as the pull call takes it: {"repo/name", "tag"} ("latest" when none; a digest
// reference "name@sha256:..." keeps its digest in the name and no tag).
std::pair<std::string, std::string> SplitImageReference(const std::string& image);

struct PullProgress {
  std::string status;   // "Downloading", "Extracting", "Pull complete", ...
  int64_t current = 0;  // bytes over every layer seen so far
  int64_t total = 0;
};

struct ContainerState {
  std::string id;
  std::string status;  // created | running | paused | restarting | removing | exited | dead
  bool running = false;
  int exit_code = 0;
  bool oom_killed = false;
  std::string error;
  std::map<std::string, std::string> labels;
};

class DockerClient {
 public:
  explicit DockerClient(std::string socket = "/var/run/docker.sock");

  // Agrees an API version with the engine (the newest both speak; the first call of any method
  // does it too) and returns it ("1.47"). Unavailable when nothing answers on the socket,
  // FailedPrecondition when the engine is too old or too new for this client.
  Result<std::string> Ping();
  Result<bool> ImageExists(const std::string& image);
  // Pulls `image`, reporting progress (returning false abandons the pull); an error the engine
  // reports mid-stream (HTTP 200 but an {"error"} line) fails it with that message.
  // `registry_auth_json` may be "".
  Status Pull(const std::string& image, const std::string& registry_auth_json,
              const std::function<bool(const PullProgress&)>& progress);
  // Creates container `name` from `body` (the create call's JSON); its id.
  Result<std::string> Create(const std::string& name, const nlohmann::json& body);
  Status Start(const std::string& id);
  Result<ContainerState> Inspect(const std::string& id);
  // Blocks until the container is not running; its exit code.
  Result<int> Wait(const std::string& id);
  Status Kill(const std::string& id, const std::string& signal);
  // SIGTERM, then SIGKILL after `seconds` (the engine's own grace).
  Status Stop(const std::string& id, int seconds);
  Status Remove(const std::string& id);
  // Containers (running or not) carrying label `key=value`.
  Result<std::vector<ContainerState>> List(const std::string& key, const std::string& value);
  // The container's output from `since` (Unix seconds with a fraction, "" for the start) with
  // timestamps, following it until the container stops (or `on_frame` returns false). Each call
  // of `on_frame` is one frame: "2026-...Z text\n" on stream 1 or 2.
  Status Logs(const std::string& id, const std::string& since,
              const std::function<bool(int stream, std::string_view frame)>& on_frame);

 private:
  Status Negotiate();
  HttpRequest Request(const std::string& method, const std::string& path) const;
  // Sends (agreeing the API version first if not yet done) and turns engine errors into a Status
  // naming `what`.
  Result<HttpResponse> Send(HttpRequest request, const std::string& what);

  std::string socket_;
  std::string api_version_;  // agreed with the engine; "" before
  HttpClient http_;
};

}  // namespace det::agent
