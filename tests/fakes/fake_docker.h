#pragma once

// A fake Docker Engine for tests: the Engine API (https://docs.docker.com/engine/api/) on a unix
// socket, answering the calls the agent's docker runtime makes (agent/docker/docker_client.h) and
// those the real `docker` CLI makes for version, pull, run -d, create, start, wait, logs, inspect,
// ps, stop, kill and rm (tests/integration/fake_docker_cli_test.cc), as the real engine answers
// them.
//
// - Versions: an optional `/v<major>.<minor>` prefix on every path; one above `api_version` or
//   below `min_api_version` is refused (400) with the engine's messages. Every answer carries
//   Api-Version (`api_version`), Ostype and Server. Errors are {"message": ...} with the engine's
//   codes: 404 no such image, container or page; 400 invalid (a body field of the wrong type
//   too); 409 conflicts; 304 (empty body) for nothing to do; 500 otherwise.
// - `GET|HEAD /_ping`, `GET /version`.
// - Images: names are normalised ("docker.io/library/" and "docker.io/" dropped, ":latest" when
//   untagged). `images` are present from the start. `POST /images/create?fromImage=&tag=` pulls
//   one of `pullable` with the engine's progress lines (two layers, "\r\n" after each, one every
//   `pull_delay`), "Image is up to date" when present. What a registry refuses is refused before
//   any progress, as dockerd 20.10 does: an unknown image 404 "pull access denied ..."; a
//   `private_images` entry pulls only with an X-Registry-Auth (padded base64url of JSON, as the
//   engine reads it: anything else is no credentials, 500 "... no basic auth credentials") whose
//   username and password match (500 "unauthorized: authentication required" otherwise). An
//   `interrupted_pulls` entry fails mid-stream: HTTP 200, a layer's progress, then a last
//   {"errorDetail","error"} line ("unexpected EOF").
//   `GET /images/{name}/json`.
// - Containers are host processes, started from the create body: argv = Entrypoint + Cmd (a
//   string runs through /bin/sh -c), exactly its Env (plus the fake's PATH when it sets none),
//   WorkingDir, stdin /dev/null, a process group of their own; when the main process exits, the
//   rest of its group is killed, as a PID namespace's end does. Binds ("src:dst[:opts]") must
//   mount an existing host folder (400 otherwise: the folder the engine would make for a missing
//   source would be root's); one at another path is mounted there in a mount namespace of the
//   process's own (util-linux's unshare; as root only, 400 otherwise), and so is an empty tmpfs
//   at each HostConfig.Tmpfs path. stdout and
//   stderr are kept per line with a distinct time each.
//   create (Content-Type, name, image, name conflicts, Count with DeviceIDs), start (a failure,
//   such as a missing WorkingDir, is 400 and leaves the container as the engine does: not
//   running, ExitCode 127, State.Error set, Status still "created" when it never ran), wait
//   (not-running, next-exit, removed; the headers go at once), kill (default SIGKILL), stop
//   (StopSignal, SIGKILL after t or StopTimeout or 10 s; t < 0 waits), logs (multiplexed frames,
//   "raw-stream" content type before API 1.42, timestamps with nine digits, since inclusive,
//   tail, follow until the container stops), inspect, list (all, label filters in both
//   encodings), delete (force). A container is named by its id, a unique id prefix or its name.
// - OOM: a container whose main process dies of a SIGKILL that no API call (kill, stop, remove)
//   sent is reported as the kernel's OOM killer leaves one: OOMKilled true, ExitCode 137 (tests
//   make one with `kill -9 $$` in the workload).
// - Admin endpoints on the same socket (not recorded): GET /_fake/calls (what Calls() returns),
//   GET /_fake/containers (what Containers() returns).
//
// Thread safety: every public method may be called from any thread; one mutex guards the state
// and is never held while writing to a socket.

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
  std::vector<std::string> images;    // present from the start ("name:tag"; no tag: ":latest")
  std::vector<std::string> pullable;  // what its registry serves
  std::map<std::string, std::string> private_images;  // image → "user:password" its pull needs
  std::vector<std::string> interrupted_pulls;  // pulls that fail mid-stream ("unexpected EOF")
  std::string api_version = "1.47";            // the newest it speaks
  std::string min_api_version = "1.24";        // the oldest it accepts
  std::chrono::milliseconds pull_delay{10};    // between pull progress lines
};

class FakeDocker {
 public:
  explicit FakeDocker(FakeDockerOptions options);
  ~FakeDocker();  // Stop()
  // Serves on `socket_path` on threads of its own; returns once it accepts connections.
  void Start(const std::string& socket_path);
  // Kills every container's process group and stops serving.
  void Stop();
  // Every API request so far, in order: {"method", "path" (without the version prefix),
  // "version" ("1.47"; "" when none), "query" (object), "content_type", "registry_auth" (the
  // decoded X-Registry-Auth JSON; null when absent), "body" (the parsed JSON; its text when it is
  // not JSON; null when empty)}.
  nlohmann::json Calls() const;
  // Every container as inspect shows it.
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
  // `version`: the request's, or api_version when it named none.
  void Route(const std::string& method, const std::string& path, const std::string& version,
             Req req, Res res);
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
  void Logs(const std::string& ref, const std::string& version, Req req, Res res);
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
