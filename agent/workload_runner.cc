#include "agent/workload_runner.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <spdlog/spdlog.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

extern char** environ;

namespace det::agent {
namespace {

constexpr size_t kMaxLineBytes = 64 * 1024;  // longer lines are split

int OpenPidFd(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
#else
  return -1;
#endif
}

void CloseFd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

// A single-string entrypoint runs through /bin/sh -c unless it is one plain word (e.g. "true"),
// which is executed directly: the same result, without a shell.
bool NeedsShell(const std::string& command) {
  return command.find_first_of(" \t\n|&;<>()$`\\\"'*?[]#~=%{}!") != std::string::npos;
}

std::string Join(const std::vector<std::string>& parts, const char* separator) {
  std::string joined;
  for (const auto& part : parts) {
    if (!joined.empty()) joined += separator;
    joined += part;
  }
  return joined;
}

// The exit code and failure type of a finished main process.
bus::WorkloadState Termination(int status, bool kill_requested) {
  bus::WorkloadState state;
  state.state = bus::kWorkloadTerminated;
  if (WIFEXITED(status)) {
    state.exit_code = WEXITSTATUS(status);
    if (state.exit_code != 0) state.message = "exited with code " + std::to_string(state.exit_code);
  } else if (WIFSIGNALED(status)) {
    state.exit_code = 128 + WTERMSIG(status);
    state.message = std::string("killed by signal ") + strsignal(WTERMSIG(status));
  }
  if (state.exit_code != 0) {
    state.failure_type = kill_requested ? bus::kFailureKilled : bus::kFailureTaskError;
  }
  return state;
}

}  // namespace

WorkloadRunner::WorkloadRunner(Options options, const Clock& clock, LogShipper& shipper)
    : options_(std::move(options)), clock_(clock), shipper_(shipper) {}

WorkloadRunner::~WorkloadRunner() {
  for (auto& [id, w] : workloads_) {
    kill(-w.pid, SIGKILL);
    waitpid(w.pid, nullptr, 0);
    CloseFd(w.out.fd);
    CloseFd(w.err.fd);
    CloseFd(w.pidfd);
  }
}

std::vector<std::string> WorkloadRunner::Environment(const bus::WorkloadStart& start) const {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string entry(*e);
    const size_t eq = entry.find('=');
    if (eq != std::string::npos) env[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  std::vector<std::string> gpus;
  for (const std::string& slot_id : start.slot_ids) {
    for (const bus::SlotInfo& slot : options_.slots) {
      if (slot.id == slot_id && slot.type == "cuda") {
        gpus.push_back(slot.uuid.empty() ? slot.id : slot.uuid);
      }
    }
  }
  env["DET_MASTER"] = start.master_address;
  env["DET_TASK_ID"] = start.task_id;
  env["DET_ALLOCATION_ID"] = start.allocation_id;
  env["DET_AGENT_ID"] = options_.agent_id;
  env["DET_SLOT_IDS"] = Join(start.slot_ids, ",");
  env["DET_SESSION_TOKEN"] = start.session_token;
  env["CUDA_VISIBLE_DEVICES"] = Join(gpus, ",");
  for (const auto& [key, value] : start.env) env[key] = value;
  std::vector<std::string> entries;
  entries.reserve(env.size());
  for (const auto& [key, value] : env) entries.push_back(key + "=" + value);
  return entries;
}

Result<pid_t> WorkloadRunner::Spawn(const bus::WorkloadStart& start, int out_fd, int err_fd,
                                    const std::string& dir) const {
  std::vector<std::string> argv = start.entrypoint;
  if (argv.size() == 1 && NeedsShell(argv[0])) argv = {"/bin/sh", "-c", start.entrypoint[0]};
  std::vector<std::string> env = Environment(start);
  std::vector<char*> args, envp;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_fd, 1);
  posix_spawn_file_actions_adddup2(&actions, err_fd, 2);
  posix_spawn_file_actions_addchdir_np(&actions, dir.c_str());
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int sig : {SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGCHLD}) sigaddset(&defaults, sig);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, args[0], &actions, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return Unavailable("cannot start " + argv[0] + ": " + std::strerror(rc));
  return pid;
}

void WorkloadRunner::Start(const bus::WorkloadStart& start, Reports* out) {
  if (workloads_.count(start.allocation_id)) return;  // a repeated start: already running
  auto report = [&](std::string_view state, int32_t code = 0, std::string_view failure = {},
                    std::string message = {}) {
    out->states.push_back({start.allocation_id, start.task_id, std::string(state), code,
                           std::string(failure), std::move(message)});
  };
  report(bus::kWorkloadStarting);
  const std::string dir = options_.work_dir + "/" + start.allocation_id;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
  if (ec || pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) {
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) {
      if (fd >= 0) close(fd);
    }
    report(bus::kWorkloadTerminated, -1, bus::kFailureStartFailed,
           "cannot prepare " + dir + ": " + (ec ? ec.message() : std::strerror(errno)));
    return;
  }
  auto pid = Spawn(start, out_pipe[1], err_pipe[1], dir);
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (!pid.ok()) {
    close(out_pipe[0]);
    close(err_pipe[0]);
    report(bus::kWorkloadTerminated, -1, bus::kFailureStartFailed, pid.status().message());
    return;
  }
  fcntl(out_pipe[0], F_SETFL, O_NONBLOCK);
  fcntl(err_pipe[0], F_SETFL, O_NONBLOCK);
  Workload& w = workloads_[start.allocation_id];
  w.task_id = start.task_id;
  w.pid = *pid;
  w.pidfd = OpenPidFd(*pid);
  w.out = {out_pipe[0], "stdout", {}};
  w.err = {err_pipe[0], "stderr", {}};
  spdlog::info("started {} (task {}) as pid {}", start.allocation_id, start.task_id, *pid);
  report(bus::kWorkloadRunning);
}

std::vector<bus::WorkloadState> WorkloadRunner::States() const {
  std::vector<bus::WorkloadState> states;
  for (const auto& [id, w] : workloads_) {
    states.push_back({id, w.task_id, std::string(bus::kWorkloadRunning), 0, "", ""});
  }
  return states;
}

void WorkloadRunner::Abandon() {
  for (auto& [id, w] : workloads_) {
    CloseFd(w.out.fd);
    CloseFd(w.err.fd);
    CloseFd(w.pidfd);
  }
  workloads_.clear();
}

void WorkloadRunner::Kill(const bus::WorkloadKill& request) {
  auto it = workloads_.find(request.allocation_id);
  if (it == workloads_.end() || it->second.kill_requested) return;
  Workload& w = it->second;
  w.kill_requested = true;
  w.kill_deadline = clock_.Now() + std::chrono::milliseconds(request.grace_ms);
  kill(-w.pid, SIGTERM);
  spdlog::info("stopping {}: SIGTERM, SIGKILL in {} ms", request.allocation_id, request.grace_ms);
}

void WorkloadRunner::AppendPollItems(std::vector<zmq::pollitem_t>* items) const {
  for (const auto& [id, w] : workloads_) {
    for (int fd : {w.out.fd, w.err.fd, w.pidfd}) {
      if (fd >= 0) items->push_back({nullptr, fd, ZMQ_POLLIN, 0});
    }
  }
}

void WorkloadRunner::Emit(const std::string& allocation_id, const Workload& w,
                          const std::string& stdtype, std::string text) {
  shipper_.Add(allocation_id, w.task_id, {UnixNanos(clock_.WallNow()), stdtype, std::move(text)},
               clock_.Now());
}

void WorkloadRunner::Drain(const std::string& allocation_id, Workload& w, Stream& stream,
                           bool final) {
  char buf[16384];
  while (stream.fd >= 0) {
    const ssize_t n = read(stream.fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) CloseFd(stream.fd);  // EOF
      break;
    }
    stream.partial.append(buf, static_cast<size_t>(n));
    size_t start = 0;
    for (size_t nl; (nl = stream.partial.find('\n', start)) != std::string::npos; start = nl + 1) {
      Emit(allocation_id, w, stream.stdtype, stream.partial.substr(start, nl - start));
    }
    stream.partial.erase(0, start);
    while (stream.partial.size() >= kMaxLineBytes) {
      Emit(allocation_id, w, stream.stdtype, stream.partial.substr(0, kMaxLineBytes));
      stream.partial.erase(0, kMaxLineBytes);
    }
  }
  if (final) {
    if (!stream.partial.empty()) Emit(allocation_id, w, stream.stdtype, std::move(stream.partial));
    stream.partial.clear();
    CloseFd(stream.fd);
  }
}

void WorkloadRunner::Reap(const std::string& allocation_id, Workload& w, int status, Reports* out) {
  kill(-w.pid, SIGKILL);  // what the main process left behind
  Drain(allocation_id, w, w.out, /*final=*/true);
  Drain(allocation_id, w, w.err, /*final=*/true);
  CloseFd(w.pidfd);
  for (auto& batch : shipper_.TakeAll(allocation_id)) out->logs.push_back(std::move(batch));
  bus::WorkloadState state = Termination(status, w.kill_requested);
  state.allocation_id = allocation_id;
  state.task_id = w.task_id;
  spdlog::info("{} ended: exit code {}{}", allocation_id, state.exit_code,
               state.failure_type.empty() ? "" : " (" + state.failure_type + ")");
  out->states.push_back(std::move(state));
}

void WorkloadRunner::Tick(Reports* out) {
  const MonoTime now = clock_.Now();
  for (auto it = workloads_.begin(); it != workloads_.end();) {
    auto& [allocation_id, w] = *it;
    Drain(allocation_id, w, w.out, /*final=*/false);
    Drain(allocation_id, w, w.err, /*final=*/false);
    int status = 0;
    pid_t reaped = waitpid(w.pid, &status, WNOHANG);
    if (reaped == w.pid) {
      Reap(allocation_id, w, status, out);
      it = workloads_.erase(it);
      continue;
    }
    if (w.kill_deadline && now >= *w.kill_deadline) {
      kill(-w.pid, SIGKILL);
      w.kill_deadline.reset();
    }
    ++it;
  }
  for (auto& batch : shipper_.TakeDue(now)) out->logs.push_back(std::move(batch));
}

}  // namespace det::agent
