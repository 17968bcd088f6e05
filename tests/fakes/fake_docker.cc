#include "tests/fakes/fake_docker.h"

#include <fcntl.h>
#include <httplib.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <optional>
#include <random>
#include <regex>

#include "common/base64.h"
#include "common/clock.h"

extern char** environ;

namespace det::testing {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// RFC 3339 in UTC with nine fractional digits, as the engine stamps log lines ("never" for 0).
std::string Rfc3339Nano(int64_t unix_ns) {
  return unix_ns == 0 ? "0001-01-01T00:00:00Z" : Rfc3339Utc(unix_ns, 9);
}

// How long ago, as the engine's `docker ps` Status says it (go-units' HumanDuration).
std::string HumanDuration(int64_t ns) {
  const int64_t seconds = ns / 1000000000, minutes = seconds / 60, hours = (seconds + 1800) / 3600;
  if (seconds < 1) return "Less than a second";
  if (seconds == 1) return "1 second";
  if (seconds < 60) return std::to_string(seconds) + " seconds";
  if (minutes == 1) return "About a minute";
  if (minutes < 60) return std::to_string(minutes) + " minutes";
  if (hours == 1) return "About an hour";
  if (hours < 48) return std::to_string(hours) + " hours";
  return std::to_string(hours / 24) + " days";
}

std::string NormalImage(std::string name) {
  for (const char* prefix : {"docker.io/library/", "docker.io/"}) {
    if (name.rfind(prefix, 0) == 0) name = name.substr(std::strlen(prefix));
  }
  const size_t slash = name.rfind('/');
  const size_t colon = name.rfind(':');
  if (name.find('@') == std::string::npos &&
      (colon == std::string::npos || (slash != std::string::npos && colon < slash))) {
    name += ":latest";
  }
  return name;
}

// The engine's reading of a boolean query value.
bool QueryBool(const httplib::Request& req, const std::string& key) {
  if (!req.has_param(key.c_str())) return false;
  std::string value = req.get_param_value(key.c_str());
  for (char& c : value) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return !(value.empty() || value == "0" || value == "no" || value == "false" || value == "none");
}

std::pair<int, int> ApiVersion(const std::string& text) {
  int major = 0, minor = 0;
  std::sscanf(text.c_str(), "%d.%d", &major, &minor);
  return {major, minor};
}

// The logs call's `since`: Unix seconds with an optional fraction ("1795482123.000000001"), as
// nanoseconds; "" is 0; nullopt when it is not that.
std::optional<int64_t> UnixNanos(const std::string& text) {
  static const std::regex kSeconds(R"(([0-9]{1,12})(\.([0-9]{1,9}))?)");
  std::smatch m;
  if (text.empty()) return 0;
  if (!std::regex_match(text, m, kSeconds)) return std::nullopt;
  std::string fraction = m[3].str();
  fraction.resize(9, '0');
  return std::stoll(m[1].str()) * 1000000000 + std::stoll(fraction);
}

int SignalNumber(std::string name) {
  if (name.empty()) return SIGKILL;
  if (std::all_of(name.begin(), name.end(), ::isdigit)) return std::stoi(name);
  if (name.rfind("SIG", 0) == 0) name = name.substr(3);
  static const std::map<std::string, int> kSignals = {
      {"TERM", SIGTERM}, {"KILL", SIGKILL}, {"INT", SIGINT},   {"HUP", SIGHUP},  {"QUIT", SIGQUIT},
      {"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"STOP", SIGSTOP}, {"CONT", SIGCONT}};
  auto it = kSignals.find(name);
  return it == kSignals.end() ? -1 : it->second;
}

std::string RandomHex(size_t n) {
  static std::mt19937_64 rng{std::random_device{}()};
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < n; ++i) out += digits[rng() % 16];
  return out;
}

// An argv from the create body's Entrypoint and Cmd (a string runs through /bin/sh -c).
std::vector<std::string> Command(const json& create) {
  std::vector<std::string> argv;
  for (const char* key : {"Entrypoint", "Cmd"}) {
    const json part = create.value(key, json());
    if (part.is_string()) {
      argv.insert(argv.end(), {"/bin/sh", "-c", part.get<std::string>()});
    } else if (part.is_array()) {
      for (const auto& arg : part) argv.push_back(arg.is_string() ? arg.get<std::string>() : "");
    }
  }
  return argv;
}

std::string Frame(int stream, const std::string& payload) {
  std::string frame(8, '\0');
  frame[0] = static_cast<char>(stream);
  const uint32_t n = static_cast<uint32_t>(payload.size());
  frame[4] = static_cast<char>(n >> 24);
  frame[5] = static_cast<char>(n >> 16);
  frame[6] = static_cast<char>(n >> 8);
  frame[7] = static_cast<char>(n);
  return frame + payload;
}

// The X-Registry-Auth header's JSON; null when absent or not padded base64url, which the real
// engine (20.10 and later) takes for no credentials, silently.
json RegistryAuth(const httplib::Request& req) {
  if (!req.has_header("X-Registry-Auth")) return nullptr;
  Result<std::string> decoded = Base64UrlDecodePadded(req.get_header_value("X-Registry-Auth"));
  if (!decoded.ok()) return nullptr;
  json auth = json::parse(*decoded, nullptr, false);
  return auth.is_discarded() ? json(nullptr) : auth;
}

}  // namespace

FakeDocker::FakeDocker(FakeDockerOptions options) : options_(std::move(options)) {
  for (const std::string& image : options_.images) images_.insert(NormalImage(image));
  for (std::string& image : options_.pullable) image = NormalImage(image);
  for (std::string& image : options_.interrupted_pulls) image = NormalImage(image);
  std::map<std::string, std::string> private_images;
  for (const auto& [image, secret] : options_.private_images) {
    private_images[NormalImage(image)] = secret;
  }
  options_.private_images = std::move(private_images);
}

FakeDocker::~FakeDocker() { Stop(); }

void FakeDocker::Start(const std::string& socket_path) {
  socket_path_ = socket_path;
  ::unlink(socket_path.c_str());
  server_ = std::make_unique<httplib::Server>();
  server_->new_task_queue = [] { return new httplib::ThreadPool(64); };
  server_->set_address_family(AF_UNIX);
  server_->set_read_timeout(3600, 0);
  server_->set_write_timeout(3600, 0);
  // HEAD comes to the GET handler; req.method tells them apart.
  auto handler = [this](Req req, Res res) { Dispatch(req.method, req, res); };
  server_->Get(".*", handler);
  server_->Post(".*", handler);
  server_->Put(".*", handler);
  server_->Patch(".*", handler);
  server_->Delete(".*", handler);
  server_->Options(".*", handler);
  // A body field of the wrong type is the caller's error (400), as the engine's decoder says;
  // anything else thrown is the fake's (500). Both as the engine's {"message"}.
  server_->set_exception_handler([](Req, Res res, std::exception_ptr thrown) {
    try {
      std::rethrow_exception(thrown);
    } catch (const json::exception& e) {
      Error(res, 400, std::string("invalid JSON: ") + e.what());
    } catch (const std::exception& e) {
      Error(res, 500, e.what());
    } catch (...) {
      Error(res, 500, "unknown failure in the fake engine");
    }
  });
  server_->bind_to_port(socket_path.c_str(), 80);
  server_thread_ = std::thread([this] { server_->listen_after_bind(); });
  while (!server_->is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
}

void FakeDocker::Stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    stopping_ = true;
    for (auto& [id, c] : containers_) {
      if (c->status == "running" && c->pid > 0) ::kill(-c->pid, SIGKILL);
    }
    changed_.notify_all();
  }
  if (server_) server_->stop();
  if (server_thread_.joinable()) server_thread_.join();
  for (std::thread& t : supervisors_) t.join();
  supervisors_.clear();
  if (!socket_path_.empty()) ::unlink(socket_path_.c_str());
}

json FakeDocker::Calls() const {
  std::lock_guard lock(mu_);
  return calls_;
}

json FakeDocker::Containers() const {
  std::lock_guard lock(mu_);
  json all = json::array();
  for (const auto& [id, c] : containers_) all.push_back(InspectJson(*c));
  return all;
}

void FakeDocker::Error(Res res, int status, const std::string& message) {
  res.status = status;
  res.set_content(json{{"message", message}}.dump() + "\n", "application/json");
}

void FakeDocker::Record(const std::string& method, const std::string& path,
                        const std::string& version, Req req) {
  json query = json::object();
  for (const auto& [key, value] : req.params) query[key] = value;
  const json auth = RegistryAuth(req);
  json body = req.body.empty() ? json() : json::parse(req.body, nullptr, false);
  std::lock_guard lock(mu_);
  calls_.push_back({{"method", method},
                    {"path", path},
                    {"version", version},
                    {"query", query},
                    {"content_type", req.get_header_value("Content-Type")},
                    {"registry_auth", auth},
                    {"body", body.is_discarded() ? json(req.body) : body}});
}

void FakeDocker::Dispatch(const std::string& method, Req req, Res res) {
  res.set_header("Api-Version", options_.api_version);
  res.set_header("Ostype", "linux");
  res.set_header("Server", "Docker/27.4.0-fake (linux)");
  if (req.path == "/_fake/calls") return res.set_content(Calls().dump(), "application/json");
  if (req.path == "/_fake/containers") {
    return res.set_content(Containers().dump(), "application/json");
  }
  static const std::regex kVersioned(R"(/v([0-9]+\.[0-9]+)(/.*))");
  std::smatch match;
  std::string version, path = req.path;
  if (std::regex_match(req.path, match, kVersioned)) {
    version = match[1];
    path = match[2];
  }
  Record(method, path, version, req);
  if (!version.empty()) {
    if (ApiVersion(version) > ApiVersion(options_.api_version)) {
      return Error(res, 400,
                   "client version " + version + " is too new. Maximum supported API version is " +
                       options_.api_version);
    }
    if (ApiVersion(version) < ApiVersion(options_.min_api_version)) {
      return Error(res, 400,
                   "client version " + version + " is too old. Minimum supported API version is " +
                       options_.min_api_version +
                       ", please upgrade your client to a newer version");
    }
  }
  Route(method, path, version.empty() ? options_.api_version : version, req, res);
}

void FakeDocker::Route(const std::string& method, const std::string& path,
                       const std::string& version, Req req, Res res) {
  static const std::regex kImage(R"(/images/(.+)/json)");
  static const std::regex kContainer(R"(/containers/([^/]+)(/[a-z]+)?)");
  std::smatch m;
  if (path == "/_ping" && (method == "GET" || method == "HEAD")) return Ping(res);
  if (path == "/version" && method == "GET") return Version(res);
  if (path == "/images/create" && method == "POST") return Pull(req, res);
  if (method == "GET" && std::regex_match(path, m, kImage)) return ImageInspect(m[1], res);
  if (path == "/containers/create" && method == "POST") return Create(req, res);
  if (path == "/containers/json" && method == "GET") return List(req, res);
  if (std::regex_match(path, m, kContainer)) {
    const std::string ref = m[1], action = m[2];
    if (method == "POST" && action == "/start") return Start(ref, res);
    if (method == "POST" && action == "/wait") return Wait(ref, req, res);
    if (method == "POST" && action == "/kill") return Kill(ref, req, res);
    if (method == "POST" && action == "/stop") return StopContainer(ref, req, res);
    if (method == "GET" && action == "/logs") return Logs(ref, version, req, res);
    if (method == "GET" && action == "/json") return Inspect(ref, res);
    if (method == "DELETE" && action.empty()) return Remove(ref, req, res);
  }
  Error(res, 404, "page not found");
}

void FakeDocker::Ping(Res res) const {
  res.set_header("Cache-Control", "no-cache, no-store, must-revalidate");
  res.set_header("Pragma", "no-cache");
  res.set_header("Swarm", "inactive");
  res.set_header("Docker-Experimental", "false");
  res.set_content("OK", "text/plain; charset=utf-8");
}

void FakeDocker::Version(Res res) const {
  const json version = {{"Platform", {{"Name", "Docker Engine - Fake"}}},
                        {"Components",
                         {{{"Name", "Engine"},
                           {"Version", "27.4.0-fake"},
                           {"Details",
                            {{"ApiVersion", options_.api_version},
                             {"MinAPIVersion", options_.min_api_version},
                             {"GitCommit", "fake"},
                             {"GoVersion", "go1.22.10"},
                             {"Os", "linux"},
                             {"Arch", "amd64"},
                             {"KernelVersion", "6.8.0"},
                             {"Experimental", "false"},
                             {"BuildTime", "2024-12-07T10:38:57.000000000+00:00"}}}}}},
                        {"Version", "27.4.0-fake"},
                        {"ApiVersion", options_.api_version},
                        {"MinAPIVersion", options_.min_api_version},
                        {"GitCommit", "fake"},
                        {"GoVersion", "go1.22.10"},
                        {"Os", "linux"},
                        {"Arch", "amd64"},
                        {"KernelVersion", "6.8.0"},
                        {"BuildTime", "2024-12-07T10:38:57.000000000+00:00"}};
  res.set_content(version.dump() + "\n", "application/json");
}

void FakeDocker::ImageInspect(const std::string& name, Res res) {
  const std::string image = NormalImage(name);
  std::lock_guard lock(mu_);
  if (!images_.count(image)) return Error(res, 404, "No such image: " + image);
  res.set_content(json{{"Id", "sha256:" + std::string(64, 'a')},
                       {"RepoTags", {image}},
                       {"Os", "linux"},
                       {"Architecture", "amd64"}}
                      .dump(),
                  "application/json");
}

void FakeDocker::Pull(Req req, Res res) {
  std::string image = req.get_param_value("fromImage");
  if (image.empty()) return Error(res, 400, "invalid reference format");
  const std::string tag = req.has_param("tag") ? req.get_param_value("tag") : "";
  if (!tag.empty()) image += (tag.rfind("sha256:", 0) == 0 ? "@" : ":") + tag;
  image = NormalImage(image);
  const auto listed = [&image](const std::vector<std::string>& images) {
    return std::find(images.begin(), images.end(), image) != images.end();
  };
  const bool interrupted = listed(options_.interrupted_pulls);
  const bool known = interrupted || listed(options_.pullable);
  const std::string repo = image.substr(0, image.rfind(':'));
  // What the registry refuses, the engine answers before any progress line, with an HTTP error.
  if (auto secret = options_.private_images.find(image); secret != options_.private_images.end()) {
    const json auth = RegistryAuth(req);
    if (!auth.is_object()) {
      return Error(res, 500,
                   "Head \"https://registry/v2/" + repo + "/manifests/" +
                       image.substr(image.rfind(':') + 1) + "\": no basic auth credentials");
    }
    if (auth.value("username", "") + ":" + auth.value("password", "") != secret->second) {
      return Error(res, 500, "unauthorized: authentication required");
    }
  } else if (!known) {
    std::lock_guard lock(mu_);
    if (!images_.count(image)) {
      return Error(res, 404,
                   "pull access denied for " + repo +
                       ", repository does not exist or may require 'docker login': denied: "
                       "requested access to the resource is denied");
    }
  }
  // A failure while layers download comes as the stream's last line, after HTTP 200.
  const std::string failure = interrupted ? "unexpected EOF" : "";
  std::vector<std::string> lines = {
      json{{"status", "Pulling from " + repo}, {"id", image.substr(image.rfind(':') + 1)}}.dump()};
  if (interrupted) {
    lines.push_back(json{{"status", "Downloading"},
                         {"progressDetail", {{"current", 1000000}, {"total", 4000000}}},
                         {"id", "3e731ddb7fc9"}}
                        .dump());
  }
  if (failure.empty()) {
    const bool present = [&] {
      std::lock_guard lock(mu_);
      return images_.count(image) > 0;
    }();
    if (!present) {
      for (const char* layer : {"3e731ddb7fc9", "9a1b2c3d4e5f"}) {
        lines.push_back(json{
            {"status", "Pulling fs layer"},
            {"progressDetail", json::object()},
            {"id", layer}}.dump());
        for (int64_t done : {1000000, 2000000, 4000000}) {
          lines.push_back(json{
              {"status", "Downloading"},
              {"progressDetail", {{"current", done}, {"total", 4000000}}},
              {"progress", "[=====>    ]"},
              {"id", layer}}.dump());
        }
        lines.push_back(json{
            {"status", "Download complete"},
            {"progressDetail", json::object()},
            {"id", layer}}.dump());
        lines.push_back(json{
            {"status", "Pull complete"},
            {"progressDetail", json::object()},
            {"id", layer}}.dump());
      }
    }
    lines.push_back(json{{"status", "Digest: sha256:" + std::string(64, 'c')}}.dump());
    lines.push_back(json{{"status", present ? "Status: Image is up to date for " + image
                                            : "Status: Downloaded newer image for " + image}}
                        .dump());
  } else {
    lines.push_back(json{{"errorDetail", {{"message", failure}}}, {"error", failure}}.dump());
  }
  auto next = std::make_shared<size_t>(0);
  const auto delay = options_.pull_delay;
  res.set_chunked_content_provider(
      "application/json",
      [this, lines, next, delay, image, ok = failure.empty()](size_t, httplib::DataSink& sink) {
        if (*next == lines.size()) {
          if (ok) {
            std::lock_guard lock(mu_);
            images_.insert(image);
          }
          sink.done();
          return true;
        }
        std::this_thread::sleep_for(delay);
        const std::string line = lines[(*next)++] + "\r\n";
        return sink.write(line.data(), line.size());
      });
}

void FakeDocker::Create(Req req, Res res) {
  if (req.get_header_value("Content-Type").rfind("application/json", 0) != 0) {
    return Error(res, 400,
                 "Content-Type specified (" + req.get_header_value("Content-Type") +
                     ") must be 'application/json'");
  }
  const json body = json::parse(req.body, nullptr, false);
  if (!body.is_object()) return Error(res, 400, "invalid JSON: the body is not an object");
  std::string name = req.get_param_value("name");
  static const std::regex kName(R"(/?[a-zA-Z0-9][a-zA-Z0-9_.-]+)");
  if (!name.empty() && !std::regex_match(name, kName)) {
    return Error(
        res, 400,
        "Invalid container name (" + name + "), only [a-zA-Z0-9][a-zA-Z0-9_.-] are allowed");
  }
  if (!name.empty() && name[0] == '/') name = name.substr(1);
  const json host = body.value("HostConfig", json::object());
  for (const json& request : host.value("DeviceRequests", json::array())) {
    if (request.value("Count", 0) != 0 && !request.value("DeviceIDs", json::array()).empty()) {
      return Error(res, 400, "cannot set both Count and DeviceIDs on device request");
    }
  }
  for (const json& bind : host.value("Binds", json::array())) {
    const std::string text = bind.is_string() ? bind.get<std::string>() : "";
    const size_t colon = text.find(':');
    const std::string source = text.substr(0, colon);
    const std::string target = colon == std::string::npos
                                   ? ""
                                   : text.substr(colon + 1, text.find(':', colon + 1) - colon - 1);
    if (source.empty() || source[0] != '/' || target.empty() || target[0] != '/') {
      return Error(res, 400, "invalid mount config: " + text + ": paths must be absolute");
    }
    // The engine would make a missing source folder, as root: a container running as someone
    // else could not write to it. The fake refuses one, so that a caller relying on that fails.
    std::error_code ignored;
    if (!fs::is_directory(source, ignored)) {
      return Error(res, 400, "fake engine: binds must mount a host folder: " + text);
    }
    // Another path inside: the container's process gets a mount namespace of its own with the
    // folder bind-mounted there (WithMounts), which needs root.
    if (source != target && geteuid() != 0) {
      return Error(res, 400,
                   "fake engine: binds to another path need root (a mount namespace): " + text);
    }
  }
  if (!host.value("Tmpfs", json::object()).empty() && geteuid() != 0) {
    return Error(res, 400, "fake engine: Tmpfs mounts need root (a mount namespace)");
  }
  const std::string image = NormalImage(body.value("Image", ""));
  std::lock_guard lock(mu_);
  if (!images_.count(image)) return Error(res, 404, "No such image: " + image);
  if (name.empty()) name = "fake_" + RandomHex(8);
  for (const auto& [id, c] : containers_) {
    if (c->name == name) {
      return Error(res, 409,
                   "Conflict. The container name \"/" + name +
                       "\" is already in use by container \"" + id +
                       "\". You have to remove (or rename) that container to be able to "
                       "reuse that name.");
    }
  }
  auto container = std::make_shared<Container>();
  container->id = RandomHex(64);
  container->name = name;
  container->image = image;
  container->create = body;
  container->created_ns = NowNs();
  containers_[container->id] = container;
  res.status = 201;
  res.set_content(json{{"Id", container->id}, {"Warnings", json::array()}}.dump() + "\n",
                  "application/json");
}

std::shared_ptr<FakeDocker::Container> FakeDocker::Find(const std::string& ref) const {
  const std::string name = !ref.empty() && ref[0] == '/' ? ref.substr(1) : ref;
  std::shared_ptr<Container> prefixed;
  int prefix_matches = 0;
  for (const auto& [id, c] : containers_) {
    if (id == ref || c->name == name) return c;
    if (id.rfind(ref, 0) == 0) {
      prefixed = c;
      ++prefix_matches;
    }
  }
  return prefix_matches == 1 ? prefixed : nullptr;
}

namespace {

// `argv` run in a mount namespace of its own (util-linux's unshare) with each bind whose target
// differs from its source mounted there, and each HostConfig.Tmpfs path, as the engine's
// container would see them; `argv` as it is when there are none.
std::vector<std::string> WithMounts(const json& create, std::vector<std::string> argv) {
  std::string script;
  const json binds = create.value("HostConfig", json::object()).value("Binds", json::array());
  for (const json& bind : binds) {
    const std::string text = bind.get<std::string>();
    const size_t colon = text.find(':');
    const std::string source = text.substr(0, colon);
    const std::string target = text.substr(colon + 1, text.find(':', colon + 1) - colon - 1);
    if (source == target) continue;
    script += "mkdir -p '" + target + "' && mount --bind '" + source + "' '" + target + "' && ";
  }
  // HostConfig.Tmpfs {path: options}: an empty tmpfs there, after the binds (deeper paths last, as
  // the engine orders mounts).
  const json tmpfs = create.value("HostConfig", json::object()).value("Tmpfs", json::object());
  for (const auto& [path, options] : tmpfs.items()) {
    const std::string given = options.is_string() ? options.get<std::string>() : "";
    script += "mkdir -p '" + path + "' && mount -t tmpfs" +
              (given.empty() ? std::string() : " -o '" + given + "'") + " tmpfs '" + path + "' && ";
  }
  if (script.empty()) return argv;
  std::vector<std::string> wrapped = {
      "unshare", "--mount", "--propagation",        "slave",      "--",
      "/bin/sh", "-c",      script + "exec \"$@\"", "fake-engine"};
  wrapped.insert(wrapped.end(), argv.begin(), argv.end());
  return wrapped;
}

// `argv` run as the container's `User` ("uid:gid", as the agent writes it), as the engine runs a
// container's process, when the fake may switch (as root) and it is another user: util-linux's
// setpriv sets the supplementary groups (HostConfig.GroupAdd, else none), gid and uid before exec.
std::vector<std::string> AsUser(const json& create, std::vector<std::string> argv) {
  const std::string user = create.value("User", "");
  const size_t colon = user.find(':');
  if (geteuid() != 0 || user.empty() || colon == std::string::npos ||
      user == std::to_string(geteuid()) + ":" + std::to_string(getegid())) {
    return argv;
  }
  std::string groups;
  for (const json& group :
       create.value("HostConfig", json::object()).value("GroupAdd", json::array())) {
    if (group.is_string()) groups += (groups.empty() ? "" : ",") + group.get<std::string>();
  }
  std::vector<std::string> switched = {
      "setpriv", "--reuid=" + user.substr(0, colon), "--regid=" + user.substr(colon + 1),
      groups.empty() ? "--clear-groups" : "--groups=" + groups, "--"};
  switched.insert(switched.end(), argv.begin(), argv.end());
  return switched;
}

}  // namespace

void FakeDocker::Start(const std::string& ref, Res res) {
  std::unique_lock lock(mu_);
  std::shared_ptr<Container> c = Find(ref);
  if (!c) return Error(res, 404, "No such container: " + ref);
  if (c->status == "running") {
    res.status = 304;
    return;
  }
  const std::string failure = Launch(c);
  if (!failure.empty()) return Error(res, 400, failure);
  res.status = 204;
}

std::string FakeDocker::Launch(const std::shared_ptr<Container>& c) {
  const std::vector<std::string> argv = Command(c->create);
  const std::string cwd = c->create.value("WorkingDir", "");
  std::string failure;
  if (argv.empty()) failure = "no command specified";
  if (failure.empty() && !cwd.empty() && !fs::is_directory(cwd)) {
    failure = "failed to create task for container: chdir to cwd (\"" + cwd +
              "\") set in config.json failed: no such file or directory";
  }
  std::vector<std::string> env;
  bool has_path = false;
  for (const json& e : c->create.value("Env", json::array())) {
    if (!e.is_string()) continue;
    env.push_back(e.get<std::string>());
    has_path |= env.back().rfind("PATH=", 0) == 0;
  }
  // The image's PATH (a Debian image's), not this host's: a host PATH may name folders the
  // container's user cannot enter (/root/.pyenv/shims), which no image has.
  if (!has_path) env.push_back("PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
  int out[2] = {-1, -1}, err[2] = {-1, -1};
  pid_t pid = -1;
  if (failure.empty()) {
    if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) failure = "pipe failed";
  }
  if (failure.empty()) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    posix_spawn_file_actions_adddup2(&actions, err[1], 2);
    if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t none, defaults;
    sigemptyset(&none);
    sigemptyset(&defaults);
    for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE, SIGCHLD, SIGUSR1, SIGUSR2}) {
      sigaddset(&defaults, sig);
    }
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(
        &attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    std::vector<char*> args, envp;
    std::vector<std::string> argv_copy = WithMounts(c->create, AsUser(c->create, argv));
    for (std::string& a : argv_copy) args.push_back(a.data());
    args.push_back(nullptr);
    for (std::string& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    const int rc = posix_spawnp(&pid, args[0], &actions, &attr, args.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    close(out[1]);
    close(err[1]);
    if (rc != 0) {
      close(out[0]);
      close(err[0]);
      failure =
          "failed to create task for container: exec: \"" + argv[0] + "\": " + std::strerror(rc);
    }
  }
  if (!failure.empty()) {
    // As the engine leaves it: not running, exit code 127 and the error; "created" when it never
    // ran (the engine's state is "created" until a start succeeds once), "exited" otherwise.
    c->exit_code = 127;
    c->error = failure;
    changed_.notify_all();
    return failure;
  }
  c->status = "running";
  c->pid = pid;
  c->exit_code = 0;
  c->oom_killed = c->killed_by_api = false;
  c->error.clear();
  c->started_ns = NowNs();
  c->finished_ns = 0;
  supervisors_.emplace_back(&FakeDocker::Supervise, this, c, out[0], err[0]);
  changed_.notify_all();
  return "";
}

void FakeDocker::Supervise(std::shared_ptr<Container> c, int out_fd, int err_fd) {
  std::string partial[3];
  int fds[2] = {out_fd, err_fd};
  bool open[2] = {true, true};
  int status = 0;
  bool exited = false;
  auto flush = [&](int stream, bool all) {
    std::string& text = partial[stream];
    size_t start = 0;
    std::lock_guard lock(mu_);
    // Distinct times, so that a reader resuming after a line's time misses none.
    auto stamp = [&] {
      const int64_t now = NowNs();
      return c->logs.empty() ? now : std::max(now, c->logs.back().unix_ns + 1);
    };
    for (size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1) {
      c->logs.push_back({stream, stamp(), text.substr(start, nl + 1 - start)});
    }
    if (all && start < text.size()) {
      c->logs.push_back({stream, stamp(), text.substr(start)});
      start = text.size();
    }
    text.erase(0, start);
    changed_.notify_all();
  };
  std::chrono::steady_clock::time_point drain_deadline{};
  while (open[0] || open[1]) {
    pollfd polled[2] = {{fds[0], POLLIN, 0}, {fds[1], POLLIN, 0}};
    for (int i = 0; i < 2; ++i) {
      if (!open[i]) polled[i].fd = -1;
    }
    ::poll(polled, 2, 50);
    for (int i = 0; i < 2; ++i) {
      if (!open[i] || !(polled[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[8192];
      const ssize_t n = ::read(fds[i], buf, sizeof buf);
      if (n <= 0) {
        open[i] = false;
        continue;
      }
      partial[i + 1].append(buf, static_cast<size_t>(n));
      flush(i + 1, false);
    }
    if (!exited && ::waitpid(c->pid, &status, WNOHANG) == c->pid) {
      exited = true;
      ::kill(-c->pid, SIGKILL);  // the container ends with its main process
      drain_deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
    }
    if (exited && std::chrono::steady_clock::now() > drain_deadline) break;
  }
  if (!exited) ::waitpid(c->pid, &status, 0);
  ::kill(-c->pid, SIGKILL);
  flush(1, true);
  flush(2, true);
  ::close(out_fd);
  ::close(err_fd);
  std::lock_guard lock(mu_);
  c->status = "exited";
  c->finished_ns = NowNs();
  if (WIFSIGNALED(status)) {
    c->exit_code = 128 + WTERMSIG(status);
    c->oom_killed = WTERMSIG(status) == SIGKILL && !c->killed_by_api;
  } else {
    c->exit_code = WEXITSTATUS(status);
  }
  const json host = c->create.value("HostConfig", json::object());
  if (host.value("AutoRemove", false)) c->removed = true;
  if (c->removed) containers_.erase(c->id);
  changed_.notify_all();
}

void FakeDocker::Signal(Container& c, int signal) {
  if (signal == SIGKILL) c.killed_by_api = true;
  ::kill(-c.pid, signal);  // the main process leads the group
}

void FakeDocker::Wait(const std::string& ref, Req req, Res res) {
  const std::string condition =
      req.has_param("condition") ? req.get_param_value("condition") : "not-running";
  if (condition != "not-running" && condition != "next-exit" && condition != "removed") {
    return Error(res, 400, "invalid condition: \"" + condition + "\"");
  }
  std::shared_ptr<Container> c;
  int64_t finished_before = 0;  // next-exit: an exit after this one
  {
    std::lock_guard lock(mu_);
    c = Find(ref);
    if (!c) return Error(res, 404, "No such container: " + ref);
    finished_before = c->finished_ns;
  }
  res.set_chunked_content_provider(
      "application/json", [this, c, condition, finished_before](size_t, httplib::DataSink& sink) {
        std::unique_lock lock(mu_);
        auto done = [&] {
          if (stopping_ || c->removed) return true;
          if (condition == "removed") return false;
          if (condition == "next-exit") {
            return c->status == "exited" && c->finished_ns != finished_before;
          }
          return c->status != "running";
        };
        while (!done()) {
          if (!sink.is_writable()) return false;
          changed_.wait_for(lock, std::chrono::milliseconds(200));
        }
        const json error = c->error.empty() ? json(nullptr) : json{{"Message", c->error}};
        const std::string body = json{{"StatusCode", c->exit_code}, {"Error", error}}.dump() + "\n";
        lock.unlock();
        sink.write(body.data(), body.size());
        sink.done();
        return true;
      });
}

void FakeDocker::Kill(const std::string& ref, Req req, Res res) {
  const int signal = SignalNumber(req.has_param("signal") ? req.get_param_value("signal") : "");
  std::lock_guard lock(mu_);
  std::shared_ptr<Container> c = Find(ref);
  if (!c) return Error(res, 404, "No such container: " + ref);
  if (signal <= 0) return Error(res, 400, "Invalid signal: " + req.get_param_value("signal"));
  if (c->status != "running") {
    return Error(res, 409,
                 "Cannot kill container: " + ref + ": Container " + c->id + " is not running");
  }
  Signal(*c, signal);
  res.status = 204;
}

void FakeDocker::StopContainer(const std::string& ref, Req req, Res res) {
  std::unique_lock lock(mu_);
  std::shared_ptr<Container> c = Find(ref);
  if (!c) return Error(res, 404, "No such container: " + ref);
  if (c->status != "running") {
    res.status = 304;
    return;
  }
  // t: the query's, else the container's StopTimeout, else 10; negative waits for as long as it
  // takes, as the engine does.
  const json timeout = c->create.value("StopTimeout", json());
  int seconds = timeout.is_number_integer() ? timeout.get<int>() : 10;
  if (req.has_param("t")) seconds = std::atoi(req.get_param_value("t").c_str());
  const json stop_signal = c->create.value("StopSignal", json());
  const int signal = SignalNumber(req.has_param("signal")   ? req.get_param_value("signal")
                                  : stop_signal.is_string() ? stop_signal.get<std::string>()
                                                            : "SIGTERM");
  Signal(*c, signal > 0 ? signal : SIGTERM);
  auto stopped = [&] { return c->status != "running"; };
  if (seconds < 0) {
    changed_.wait(lock, stopped);
  } else if (!changed_.wait_for(lock, std::chrono::seconds(seconds), stopped)) {
    Signal(*c, SIGKILL);
    changed_.wait(lock, stopped);
  }
  res.status = 204;
}

void FakeDocker::Logs(const std::string& ref, const std::string& version, Req req, Res res) {
  const bool want_out = QueryBool(req, "stdout"), want_err = QueryBool(req, "stderr");
  if (!want_out && !want_err) {
    return Error(res, 400, "Bad parameters: you must choose at least one stream");
  }
  std::shared_ptr<Container> c;
  bool follow = QueryBool(req, "follow");
  size_t first = 0;
  {
    std::lock_guard lock(mu_);
    c = Find(ref);
    if (!c) return Error(res, 404, "No such container: " + ref);
    follow = follow && c->status == "running";
    if (req.has_param("tail") && req.get_param_value("tail") != "all") {
      const size_t tail = std::strtoul(req.get_param_value("tail").c_str(), nullptr, 10);
      first = c->logs.size() > tail ? c->logs.size() - tail : 0;
    }
  }
  std::optional<int64_t> since_ns = UnixNanos(req.get_param_value("since"));
  if (!since_ns) {
    return Error(res, 400,
                 "invalid value for \"since\": " + req.get_param_value("since") +
                     " (Unix seconds, optionally with a fraction)");
  }
  const bool timestamps = QueryBool(req, "timestamps");
  auto next = std::make_shared<size_t>(first);
  // Before API 1.42 the engine called the same frames a raw stream.
  const char* content_type = ApiVersion(version) >= std::pair{1, 42}
                                 ? "application/vnd.docker.multiplexed-stream"
                                 : "application/vnd.docker.raw-stream";
  res.set_chunked_content_provider(content_type, [=, this](size_t, httplib::DataSink& sink) {
    std::unique_lock lock(mu_);
    while (*next == c->logs.size() && follow && c->status == "running" && !stopping_) {
      if (!sink.is_writable()) return false;
      changed_.wait_for(lock, std::chrono::milliseconds(200));
    }
    std::string out;
    for (; *next < c->logs.size(); ++*next) {
      const LogLine& line = c->logs[*next];
      if (line.unix_ns < *since_ns) continue;
      if ((line.stream == 1 && !want_out) || (line.stream == 2 && !want_err)) continue;
      out += Frame(line.stream, (timestamps ? Rfc3339Nano(line.unix_ns) + " " : "") + line.text);
    }
    const bool over = !follow || c->status != "running" || stopping_;
    lock.unlock();
    if (!out.empty() && !sink.write(out.data(), out.size())) return false;
    if (over) {
      // What came after the last look is sent before the end.
      std::lock_guard relock(mu_);
      if (*next == c->logs.size()) sink.done();
    }
    return true;
  });
}

json FakeDocker::InspectJson(const Container& c) const {
  const std::vector<std::string> argv = Command(c.create);
  const json config = c.create;
  return {{"Id", c.id},
          {"Created", Rfc3339Nano(c.created_ns)},
          {"Name", "/" + c.name},
          {"Path", argv.empty() ? "" : argv[0]},
          {"Args", argv.empty() ? std::vector<std::string>{}
                                : std::vector<std::string>(argv.begin() + 1, argv.end())},
          {"State",
           {{"Status", c.status},
            {"Running", c.status == "running"},
            {"Paused", false},
            {"Restarting", false},
            {"OOMKilled", c.oom_killed},
            {"Dead", false},
            {"Pid", c.status == "running" ? c.pid : 0},
            {"ExitCode", c.exit_code},
            {"Error", c.error},
            {"StartedAt", Rfc3339Nano(c.started_ns)},
            {"FinishedAt", Rfc3339Nano(c.finished_ns)}}},
          {"Image", "sha256:" + std::string(64, 'a')},
          {"RestartCount", 0},
          {"Config",
           {{"Image", c.image},
            {"Env", config.value("Env", json::array())},
            {"Cmd", config.value("Cmd", json())},
            {"Entrypoint", config.value("Entrypoint", json())},
            {"WorkingDir", config.value("WorkingDir", "")},
            {"User", config.value("User", "")},
            {"Labels", config.value("Labels", json::object())},
            {"Tty", false},
            {"AttachStdout", true},
            {"AttachStderr", true},
            {"OpenStdin", false}}},
          {"HostConfig", config.value("HostConfig", json::object())},
          {"Mounts", json::array()},
          {"NetworkSettings", {{"Networks", json::object()}}}};
}

void FakeDocker::Inspect(const std::string& ref, Res res) {
  std::lock_guard lock(mu_);
  std::shared_ptr<Container> c = Find(ref);
  if (!c) return Error(res, 404, "No such container: " + ref);
  res.set_content(InspectJson(*c).dump() + "\n", "application/json");
}

void FakeDocker::List(Req req, Res res) {
  std::vector<std::string> labels;
  if (req.has_param("filters")) {
    const json filters = json::parse(req.get_param_value("filters"), nullptr, false);
    if (!filters.is_object()) return Error(res, 400, "invalid filter");
    const json label = filters.value("label", json());
    if (label.is_array()) {
      for (const json& l : label) labels.push_back(l.get<std::string>());
    } else if (label.is_object()) {
      for (const auto& [l, on] : label.items()) labels.push_back(l);
    }
  }
  const bool all = QueryBool(req, "all");
  json list = json::array();
  std::lock_guard lock(mu_);
  for (const auto& [id, c] : containers_) {
    if (!all && c->status != "running") continue;
    const json have = c->create.value("Labels", json::object());
    const bool matches = std::all_of(labels.begin(), labels.end(), [&](const std::string& l) {
      const size_t eq = l.find('=');
      const std::string key = l.substr(0, eq);
      if (!have.contains(key)) return false;
      return eq == std::string::npos || have[key] == l.substr(eq + 1);
    });
    if (!matches) continue;
    const std::vector<std::string> argv = Command(c->create);
    std::string command;
    for (const std::string& a : argv) command += (command.empty() ? "" : " ") + a;
    list.push_back(
        {{"Id", id},
         {"Names", {"/" + c->name}},
         {"Image", c->image},
         {"ImageID", "sha256:" + std::string(64, 'a')},
         {"Command", command},
         {"Created", c->created_ns / 1000000000},
         {"State", c->status},
         {"Status", c->status == "running"  ? "Up " + HumanDuration(NowNs() - c->started_ns)
                    : c->status == "exited" ? "Exited (" + std::to_string(c->exit_code) + ") " +
                                                  HumanDuration(NowNs() - c->finished_ns) + " ago"
                                            : "Created"},
         {"Labels", have},
         {"Ports", json::array()},
         {"Mounts", json::array()},
         {"HostConfig",
          {{"NetworkMode",
            c->create.value("HostConfig", json::object()).value("NetworkMode", "default")}}},
         {"NetworkSettings", {{"Networks", json::object()}}}});
  }
  res.set_content(list.dump() + "\n", "application/json");
}

void FakeDocker::Remove(const std::string& ref, Req req, Res res) {
  std::unique_lock lock(mu_);
  std::shared_ptr<Container> c = Find(ref);
  if (!c) return Error(res, 404, "No such container: " + ref);
  if (c->status == "running") {
    if (!QueryBool(req, "force")) {
      return Error(res, 409,
                   "cannot remove container \"/" + c->name +
                       "\": container is running: stop the container before removing "
                       "or force remove");
    }
    Signal(*c, SIGKILL);
    changed_.wait(lock, [&] { return c->status != "running"; });
  }
  c->removed = true;
  containers_.erase(c->id);
  changed_.notify_all();
  res.status = 204;
}

}  // namespace det::testing
