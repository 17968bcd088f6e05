#pragma once

// A fake Docker Engine for tests: the Engine API (https://docs.docker.com/engine/api/) on a unix
// socket, as the real engine answers the calls the agent's docker runtime makes, and as the real
// `docker` CLI uses it (tests/integration/fake_docker_cli_test.cc).
//
// - Versions: an optional `/v1.NN` prefix; one above `api_version` or below `min_api_version` is
//   refused (400) with the engine's messages. `GET|HEAD /_ping`, `GET /version`. Every answer
//   carries Api-Version, Ostype and Server; errors are {"message": ...} with the engine's codes.
// - Images: `images` are present; `POST /images/create` pulls one of `pullable` with progress
//   lines (HTTP 200, a line every `pull_delay`); anything else fails the way the engine fails
//   mid-stream: 200 and a last {"errorDetail","error"} line ("pull access denied ..."). A
//   `private_images` entry pulls only with an X-Registry-Auth whose username and password match.
//   `GET /images/{name}/json`.
// - Containers are host processes: Entrypoint + Cmd, with exactly the create body's Env (plus the
//   fake's PATH when it sets none), WorkingDir, stdin /dev/null, a process group of their own.
//   Binds must mount a host folder at its own path (the fake cannot remap paths); a missing one
//   is made, as the engine makes it. Their output is
//   kept per line with its time; when the main process exits, the rest of its group is killed,
//   as a PID namespace's end does. create (Content-Type, name, image, name conflicts, Count with
//   DeviceIDs checked), start, wait (not-running, next-exit, removed; headers sent at once), kill,
//   stop (StopSignal, SIGKILL after t), logs (multiplexed frames, timestamps with nine digits,
//   since, tail, follow until the container stops), inspect, list (all, label filters in both
//   encodings), delete (force).
// - OOM: a container whose main process dies of a SIGKILL that no API call sent is reported as
//   the kernel's OOM killer leaves one: OOMKilled true, exit code 137 (tests make one with
//   `kill -9 $$`).
// - Admin (not recorded): GET /_fake/calls (every API request: method, path without the version,
//   version, query, content_type, registry_auth decoded, body), GET /_fake/containers.

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace det::testing {

struct FakeDockerOptions {
  std::vector<std::string> images;  // present from the start ("name:tag"; no tag: ":latest")
  std::vector<std::string> pullable;
  std::map<std::string, std::string> private_images;  // image → "user:password"
  std::string api_version = "1.47";
  std::string min_api_version = "1.24";
  std::chrono::milliseconds pull_delay{10};
};

class FakeDocker {
 public:
  explicit FakeDocker(FakeDockerOptions options);
  ~FakeDocker();  // Stop()
  // Serves on `socket_path` on threads of its own; returns once it accepts connections.
  void Start(const std::string& socket_path);
  // Kills every container's process group and stops serving.
  void Stop();
  nlohmann::json Calls() const;
  nlohmann::json Containers() const;
  const std::string& socket_path() const { return socket_path_; }

 private:
  struct LogLine {
    int stream;  // 1 stdout, 2 stderr
    int64_t unix_ns;
    std::string text;  // with its newline
  };
  struct Container {
    std::string id, name, image;
    nlohmann::json create;
    std::string status = "created";  // created | running | exited
    pid_t pid = -1;
    int exit_code = 0;
    bool oom_killed = false;
    bool killed_by_api = false;
    bool removed = false;
    std::string error;
    int64_t created_ns = 0, started_ns = 0, finished_ns = 0;
    std::vector<LogLine> logs;
  };
  using Req = const httplib::Request&;
  using Res = httplib::Response&;

  void Dispatch(const std::string& method, Req req, Res res);
  void Route(const std::string& method, const std::string& path, Req req, Res res);
  void Record(const std::string& method, const std::string& path, const std::string& version,
              Req req);
  static void Error(Res res, int status, const std::string& message);

  void Ping(Res res) const;
  void Version(Res res) const;
  void ImageInspect(const std::string& name, Res res);
  void Pull(Req req, Res res);
  void Create(Req req, Res res);
  void Start(const std::string& ref, Res res);
  void Wait(const std::string& ref, Req req, Res res);
  void Kill(const std::string& ref, Req req, Res res);
  void StopContainer(const std::string& ref, Req req, Res res);
  void Logs(const std::string& ref, Req req, Res res);
  void Inspect(const std::string& ref, Res res);
  void List(Req req, Res res);
  void Remove(const std::string& ref, Req req, Res res);

  // Requires mu_. Finds by id, unique id prefix or name ("/" optional).
  std::shared_ptr<Container> Find(const std::string& ref) const;
  nlohmann::json InspectJson(const Container& c) const;
  // Runs the container's process and watches it until it ends (a thread per container).
  std::string Launch(const std::shared_ptr<Container>& c);
  void Supervise(std::shared_ptr<Container> c, int out_fd, int err_fd);
  // Sends `signal` to the container's group, noting that the API sent it.
  void Signal(Container& c, int signal);

  FakeDockerOptions options_;
  std::string socket_path_;
  std::unique_ptr<httplib::Server> server_;
  std::thread server_thread_;
  mutable std::mutex mu_;
  std::condition_variable changed_;
  std::set<std::string> images_;
  std::map<std::string, std::shared_ptr<Container>> containers_;  // by id
  std::vector<std::thread> supervisors_;
  nlohmann::json calls_ = nlohmann::json::array();
  bool stopping_ = false;
};

}  // namespace det::testing
