#include "agent/docker/docker_pump.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <mutex>
#include <thread>

#include "agent/docker/docker_client.h"
#include "agent/docker/docker_workload.h"
#include "common/clock.h"
#include "common/files.h"

namespace det::agent {
namespace {

constexpr int kDefaultStopGraceSeconds = 10;
constexpr auto kProgressInterval = std::chrono::seconds(5);
// How long the pump keeps asking an engine that stopped answering before it gives up on the
// container (the engine restarting takes seconds).
constexpr int kEngineRetries = 300;

std::string Trimmed(std::string text) {
  text.erase(text.find_last_not_of(" \t\r\n") + 1);
  text.erase(0, text.find_first_not_of(" \t\r\n"));
  return text;
}

std::string Megabytes(int64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MB", static_cast<double>(bytes) / 1e6);
  return text;
}

void WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the folder is gone: nothing to keep the output in
    data.remove_prefix(static_cast<size_t>(n));
  }
}

void Say(const std::string& line) { WriteAll(STDOUT_FILENO, line + "\n"); }

// How a container ended or could not start: the pump's exit code and, when the code alone does
// not say it, the line for container_end.
struct Ending {
  int code = 0;
  std::string end;
};

class Pump {
 public:
  explicit Pump(std::string dir) : dir_(std::move(dir)) {}

  int Run() {
    auto spec = ReadFileText(Path(kContainerSpecFile));
    auto parsed = spec ? DockerWorkload::FromJson(*spec)
                       : Result<DockerWorkload>(NotFound("no " + Path(kContainerSpecFile)));
    if (!parsed.ok())
      return End({kContainerStartFailedCode, "start-failed " + parsed.status().message()});
    spec_ = std::move(*parsed);
    client_ = std::make_unique<DockerClient>(spec_.socket);
    std::thread(&Pump::WatchStops, this).detach();
    Ending ending;
    Result<std::string> id = Container(&ending);
    if (!id.ok()) return End(ending);
    SetPhase("RUNNING");
    return End(Follow(*id));
  }

 private:
  std::string Path(const char* name) const { return dir_ + "/" + name; }

  int End(const Ending& ending) {
    if (!ending.end.empty()) {
      (void)WriteFileInPlace(Path(kContainerEndFile), ending.end);
      if (ending.end.rfind("oom", 0) != 0) WriteAll(STDERR_FILENO, ending.end + "\n");
    }
    return ending.code;
  }

  void SetPhase(const char* phase) { (void)WriteFileInPlace(Path(kContainerPhaseFile), phase); }

  bool StopRequested() {
    std::lock_guard lock(mu_);
    return stop_requested_;
  }

  // The container to follow: adopted, or made and started. Fails with `ending` filled in.
  Result<std::string> Container(Ending* ending) {
    const std::string known = Trimmed(ReadFileText(Path(kContainerIdFile)).value_or(""));
    Result<ContainerState> existing = client_->Inspect(known.empty() ? spec_.name : known);
    if (existing.ok()) return Adopt(*existing, ending);
    if (existing.status().code() != StatusCode::kNotFound) {
      *ending = {kContainerStartFailedCode, "start-failed " + existing.status().message()};
      return existing.status();
    }
    if (!known.empty()) {
      *ending = {1, "lost container " + known + " was removed while the agent was away"};
      return existing.status();
    }
    return CreateAndStart(ending);
  }

  Result<std::string> Adopt(const ContainerState& state, Ending* ending) {
    Remember(state.id);
    if (state.status == "created") return StartIt(state.id, ending);
    return state.id;
  }

  Result<std::string> CreateAndStart(Ending* ending) {
    SetPhase("PULLING");
    if (Status pulled = EnsureImage(); !pulled.ok()) {
      *ending = StopRequested()
                    ? Ending{128 + SIGTERM, ""}
                    : Ending{kContainerStartFailedCode, "start-failed " + pulled.message()};
      return pulled;
    }
    SetPhase("STARTING");
    MakeBindSources();
    Result<std::string> id = client_->Create(spec_.name, spec_.create);
    if (!id.ok() && id.status().code() == StatusCode::kAlreadyExists) {
      Result<ContainerState> raced = client_->Inspect(spec_.name);  // made by a pump before us
      if (raced.ok()) return Adopt(*raced, ending);
    }
    if (!id.ok()) {
      *ending = {kContainerStartFailedCode, "start-failed " + id.status().message()};
      return id.status();
    }
    (void)WriteFileInPlace(Path(kContainerIdFile), *id);
    if (Remember(*id)) {  // stopped before it ever ran
      (void)client_->Remove(*id);
      *ending = {128 + SIGTERM, ""};
      return FailedPrecondition("stopped before it started");
    }
    return StartIt(*id, ending);
  }

  Result<std::string> StartIt(const std::string& id, Ending* ending) {
    if (Status started = client_->Start(id); !started.ok()) {
      (void)client_->Remove(id);
      *ending = {kContainerStartFailedCode, "start-failed " + started.message()};
      return started;
    }
    return id;
  }

  // The host folders to mount that do not exist yet (a checkpoint storage's first use) are made
  // here, as the agent's user: the engine would make them as root, and the container, which runs
  // as the agent's user, could not write to them.
  void MakeBindSources() const {
    const nlohmann::json host = spec_.create.value("HostConfig", nlohmann::json::object());
    for (const nlohmann::json& bind : host.value("Binds", nlohmann::json::array())) {
      if (!bind.is_string()) continue;
      const std::string text = bind.get<std::string>();
      std::error_code ignored;  // the engine names a folder it cannot mount
      std::filesystem::create_directories(text.substr(0, text.find(':')), ignored);
    }
  }

  // Makes `id` the container a stop reaches; true when a stop came before.
  bool Remember(const std::string& id) {
    std::lock_guard lock(mu_);
    id_ = id;
    return stop_requested_;
  }

  Status EnsureImage() {
    if (!spec_.force_pull) {
      Result<bool> present = client_->ImageExists(spec_.image);
      if (!present.ok()) return present.status();
      if (*present) return Status::Ok();
    }
    Say("pulling image " + spec_.image);
    const Clock& clock = RealClock::Instance();
    MonoTime last = clock.Now();
    Status pulled = client_->Pull(spec_.image, spec_.registry_auth, [&](const PullProgress& p) {
      const MonoTime now = clock.Now();
      if (now - last >= kProgressInterval && p.total > 0) {
        last = now;
        Say("pulling image " + spec_.image + ": " + Megabytes(p.current) + " of " +
            Megabytes(p.total));
      }
      return !StopRequested();
    });
    if (pulled.ok()) Say("pulled image " + spec_.image);
    return pulled;
  }

  // Copies the output until the container stops; how it ended.
  Ending Follow(const std::string& id) {
    for (int failures = 0; failures < kEngineRetries; ++failures) {
      Status followed = client_->Logs(id, Since(), [&](int stream, std::string_view frame) {
        Copy(stream, frame);
        return true;
      });
      Result<ContainerState> state = client_->Inspect(id);
      if (state.ok() && !state->running && state->status != "created") return Ended(*state);
      if (!state.ok() && state.status().code() == StatusCode::kNotFound) {
        return {1, "lost container " + id + " was removed by someone else"};
      }
      if (followed.ok() && state.ok()) failures = 0;  // still running: the stream just ended
      RealClock::Instance().SleepFor(std::chrono::seconds(1));
    }
    return {1, "lost the Docker engine on " + spec_.socket + " stopped answering"};
  }

  Ending Ended(const ContainerState& state) {
    (void)client_->Remove(state.id);
    const int code = state.exit_code < 0 || state.exit_code > 255 ? 1 : state.exit_code;
    if (state.oom_killed) return {code, "oom " + std::to_string(state.exit_code)};
    return {code, ""};
  }

  // `since` for the engine: after the last line written (the engine's since is inclusive: lines
  // at that very time are skipped by Copy).
  std::string Since() {
    if (!cursor_) {
      cursor_ = ParseRfc3339Utc(Trimmed(ReadFileText(Path(kLogCursorFile)).value_or("")));
    }
    if (!cursor_) return "";
    char since[48];
    std::snprintf(since, sizeof since, "%lld.%09lld", static_cast<long long>(*cursor_ / 1000000000),
                  static_cast<long long>(*cursor_ % 1000000000));
    return since;
  }

  void Copy(int stream, std::string_view frame) {
    const size_t space = frame.find(' ');
    const std::string stamp(frame.substr(0, space == std::string_view::npos ? 0 : space));
    const std::optional<int64_t> at = ParseRfc3339Utc(stamp);
    if (at && cursor_ && *at <= *cursor_) return;  // written before
    std::string_view text = at ? frame.substr(space + 1) : frame;
    WriteAll(stream == 2 ? STDERR_FILENO : STDOUT_FILENO, text);
    if (at) {
      cursor_ = at;
      (void)WriteFileInPlace(Path(kLogCursorFile), stamp);
    }
  }

  // SIGTERM, SIGINT: the engine stops the container (the stop signal, SIGKILL after the grace).
  void WatchStops() {
    sigset_t stops;
    sigemptyset(&stops);
    for (int sig : {SIGTERM, SIGINT}) sigaddset(&stops, sig);
    int sig = 0;
    if (sigwait(&stops, &sig) != 0) return;
    std::string id;
    {
      std::lock_guard lock(mu_);
      stop_requested_ = true;
      id = id_;
    }
    if (id.empty()) return;  // the main thread sees the request before it starts anything
    int grace = kDefaultStopGraceSeconds;
    if (auto text = ReadFileText(Path(kStopGraceFile))) {
      grace = std::atoi(text->c_str());
    }
    DockerClient client(spec_.socket);
    (void)client.Stop(id, grace);
  }

  std::string dir_;
  DockerWorkload spec_;
  std::unique_ptr<DockerClient> client_;  // the main thread's
  std::optional<int64_t> cursor_;         // the engine's time of the last line written (Unix ns)
  std::mutex mu_;
  std::string id_;               // guarded by mu_
  bool stop_requested_ = false;  // guarded by mu_
};

}  // namespace

int RunDockerPump(const std::string& dir) {
  sigset_t stops;  // taken by the stop watcher only
  sigemptyset(&stops);
  for (int sig : {SIGTERM, SIGINT}) sigaddset(&stops, sig);
  pthread_sigmask(SIG_BLOCK, &stops, nullptr);
  signal(SIGPIPE, SIG_IGN);
  return Pump(dir).Run();
}

}  // namespace det::agent
