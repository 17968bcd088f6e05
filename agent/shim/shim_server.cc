#include "agent/shim/shim_server.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string>
#include <vector>

#include "agent/shim/workload_shim.h"

extern char** environ;

namespace det::agent {
namespace {

bool ReadFully(int fd, void* buffer, size_t size) {
  auto* at = static_cast<char*>(buffer);
  while (size > 0) {
    const ssize_t got = read(fd, at, size);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    at += got;
    size -= static_cast<size_t>(got);
  }
  return true;
}

bool WriteFully(int fd, const void* buffer, size_t size) {
  const auto* at = static_cast<const char*>(buffer);
  while (size > 0) {
    const ssize_t put = write(fd, at, size);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) return false;
    at += put;
    size -= static_cast<size_t>(put);
  }
  return true;
}

// `path` opened with `flags` as descriptor `target`; false with errno set.
bool OpenAs(int target, const std::string& path, int flags) {
  const int fd = open(path.c_str(), flags, 0644);
  if (fd < 0) return false;
  if (fd == target) return true;
  const bool moved = dup2(fd, target) == target;
  const int saved = errno;
  close(fd);
  errno = saved;
  return moved;
}

// The clone's setup before it runs the shim; errno of the first step that failed, or 0.
int BecomeShim(const ShimRequest& request) {
  if (setpgid(0, 0) != 0) return errno;
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int sig : {SIGPIPE, SIGCHLD}) signal(sig, SIG_DFL);
  // The shim ignores the group's stop signals (the workload gets them): from before the agent
  // learns its pid, so that a stop sent at once cannot end the shim instead.
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) signal(sig, SIG_IGN);
  const std::string out = request.dir + "/" + kStdoutFile, err = request.dir + "/" + kStderrFile;
  if (!OpenAs(0, "/dev/null", O_RDONLY) || !OpenAs(1, out, O_WRONLY | O_APPEND | O_CREAT) ||
      !OpenAs(2, err, O_WRONLY | O_APPEND | O_CREAT) || chdir(request.dir.c_str()) != 0) {
    return errno;
  }
  return 0;
}

// The clone's life: set up, say so on `report`, run the shim, exit as it says. Never returns.
// A raw clone leaves glibc's record of the thread as the server's: the shim needs none of what
// depends on it (no threads, no raise), and exits with _exit (no exit handlers of the server's).
[[noreturn]] void RunClone(int server_fd, int report[2], ShimRequest& request) {
  close(server_fd);
  close(report[0]);  // so that with the server gone, the report below ends this clone (SIGPIPE)
  const int failure = BecomeShim(request);
  const bool told = WriteFully(report[1], &failure, sizeof failure);
  close(report[1]);
  if (failure != 0 || !told) _exit(127);
  std::vector<char*> env;
  for (std::string& entry : request.env) env.push_back(entry.data());
  env.push_back(nullptr);
  environ = env.data();
  std::vector<char*> args{request.dir.data()};
  for (std::string& arg : request.argv) args.push_back(arg.data());
  args.push_back(nullptr);
  const int code = RunWorkloadShim(static_cast<int>(args.size()) - 1, args.data());
  std::fflush(nullptr);
  _exit(code);
}

ShimReply Start(int server_fd, ShimRequest& request) {
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) return {-1, errno};
  // CLONE_PARENT: the shim is the agent's child, as a shim the agent spawned would be.
  const long pid = syscall(SYS_clone, CLONE_PARENT | SIGCHLD, nullptr, nullptr, nullptr, nullptr);
  if (pid == 0) RunClone(server_fd, report, request);
  const int clone_errno = errno;
  close(report[1]);
  ShimReply reply{static_cast<int32_t>(pid), 0};
  if (pid < 0) {
    reply.error = clone_errno;
  } else if (!ReadFully(report[0], &reply.error, sizeof reply.error)) {
    reply.error = ECHILD;  // it died before saying (killed): the agent reaps it
  }
  close(report[0]);
  return reply;
}

}  // namespace

int RunShimServer(int fd) {
  // In "/" (no folder of the agent's kept busy); its clones move into their workloads' folders,
  // which tells the server apart from them (its command line is theirs).
  if (fcntl(fd, F_SETFD, FD_CLOEXEC) != 0 || chdir("/") != 0) return 2;
  signal(SIGPIPE, SIG_IGN);  // a gone agent is a failed write; the clones set it back
  if (!WriteFully(fd, &kShimServerReady, 1)) return 0;
  std::string payload;
  while (true) {
    uint32_t size = 0;
    if (!ReadFully(fd, &size, sizeof size)) return 0;  // the agent closed its end (or died)
    if (size > kMaxShimRequestBytes) return 2;
    payload.resize(size);
    if (!ReadFully(fd, payload.data(), size)) return 0;
    ShimRequest request;
    const ShimReply reply =
        DecodeShimRequest(payload, &request) ? Start(fd, request) : ShimReply{-1, EINVAL};
    if (!WriteFully(fd, &reply, sizeof reply)) return 0;
  }
}

}  // namespace det::agent
