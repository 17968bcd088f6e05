#include "agent/shim_launcher.h"

#include <signal.h>
#include <spawn.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "agent/workload_record.h"
#include "agent/workload_spawn.h"
#include "common/process.h"

extern char** environ;

namespace det::agent {
namespace {

// How long the server may take over one request (a clone, three files and a folder: normally a
// tenth of a millisecond) before it counts as stuck and is replaced.
constexpr timeval kAnswerLimit{10, 0};
constexpr int kFailuresBeforeGivingUp = 2;

bool SendFully(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t put = send(fd, data, size, MSG_NOSIGNAL);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) return false;
    data += put;
    size -= static_cast<size_t>(put);
  }
  return true;
}

bool ReceiveFully(int fd, char* data, size_t size) {
  while (size > 0) {
    const ssize_t got = recv(fd, data, size, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    data += got;
    size -= static_cast<size_t>(got);
  }
  return true;
}

}  // namespace

ShimLauncher::ShimLauncher(std::string shim_program) : shim_program_(std::move(shim_program)) {}

ShimLauncher::~ShimLauncher() { StopServer(); }

Status ShimLauncher::StartServer() {
  int ends[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) != 0) {
    return Unavailable(std::string("cannot make the shim server's socket: ") +
                       std::strerror(errno));
  }
  for (int option : {SO_RCVTIMEO, SO_SNDTIMEO}) {
    setsockopt(ends[0], SOL_SOCKET, option, &kAnswerLimit, sizeof kAnswerLimit);
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, ends[1], kShimServerFd);  // without FD_CLOEXEC
  posix_spawnattr_t attr;
  InitSpawnWithDefaultSignals(attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);  // a terminal's ^C is not for it: it ends with the agent
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) env.emplace_back(*e);
  auto pid = SpawnPrepared({shim_program_, kShimServerArg}, env, actions, attr);
  close(ends[1]);
  if (!pid.ok()) {
    close(ends[0]);
    return pid.status();
  }
  socket_ = ends[0];
  server_pid_ = *pid;
  char ready = 0;
  if (!ReceiveFully(socket_, &ready, 1) || ready != kShimServerReady) {
    StopServer();
    return FailedPrecondition(shim_program_ + " does not serve as a shim server");
  }
  return Status::Ok();
}

void ShimLauncher::StopServer() {
  if (socket_ >= 0) close(socket_);
  socket_ = -1;
  if (server_pid_ > 0) {
    kill(server_pid_, SIGKILL);  // it may be stuck; it holds nothing of a workload's
    while (waitpid(server_pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  server_pid_ = -1;
}

ShimLauncher::Outcome ShimLauncher::Ask(const std::string& payload, ShimReply* reply) {
  const auto size = static_cast<uint32_t>(payload.size());
  std::string message(reinterpret_cast<const char*>(&size), sizeof size);
  message += payload;
  if (!SendFully(socket_, message.data(), message.size())) return Outcome::kNotSent;
  return ReceiveFully(socket_, reinterpret_cast<char*>(reply), sizeof *reply) ? Outcome::kAnswered
                                                                              : Outcome::kNoAnswer;
}

Result<pid_t> ShimLauncher::Answered(const ShimReply& reply, const std::string& dir) {
  failures_in_a_row_ = 0;
  if (reply.error == 0 && reply.pid > 0) return static_cast<pid_t>(reply.pid);
  if (reply.pid > 0) {  // the clone that failed is this process's child
    while (waitpid(reply.pid, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  return Unavailable("cannot start the workload's shim in " + dir + ": " +
                     std::strerror(reply.error));
}

void ShimLauncher::NoteFailure() {
  if (++failures_in_a_row_ < kFailuresBeforeGivingUp) return;
  spdlog::warn(
      "the shim server ({} {}) ended twice without answering: starting each workload's "
      "shim as a program of its own from now on",
      shim_program_, kShimServerArg);
  given_up_ = true;
}

Result<pid_t> ShimLauncher::Spawn(const std::vector<std::string>& argv,
                                  const std::vector<std::string>& env, const std::string& dir) {
  const std::string payload = EncodeShimRequest({dir, argv, env});
  while (!given_up_ && payload.size() <= kMaxShimRequestBytes) {
    if (socket_ < 0) {
      Status started = StartServer();
      if (started.code() == StatusCode::kFailedPrecondition) {
        spdlog::warn("{}: starting each workload's shim as a program of its own",
                     started.message());
        given_up_ = true;
        break;
      }
      if (!started.ok()) return started;  // as a spawn of the program would fail
    }
    ShimReply reply;
    const Outcome outcome = Ask(payload, &reply);
    if (outcome == Outcome::kAnswered) return Answered(reply, dir);
    StopServer();
    // Without an answer the clone may have started the shim (it is then set up in its folder); a
    // clone that had not finished its setup dies writing its report to the server's gone pipe.
    // Never sent again: a clone stuck in its setup (a hung mount) could still start it later.
    if (outcome == Outcome::kNoAnswer) {
      for (pid_t pid : ProcessGroupsLedBy(kWorkloadShimProgram, dir)) {
        if (IsShimOf(pid, dir)) return pid;
      }
      NoteFailure();
      return Unavailable("the shim server ended before it answered; the workload in " + dir +
                         " was not started");
    }
    NoteFailure();
  }
  return SpawnUnderShim(shim_program_, argv, env, dir);
}

}  // namespace det::agent
