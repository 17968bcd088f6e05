#include "agent/workload_shim.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

extern char** environ;

namespace det::agent {
namespace {

// Written in place (no temporary file and rename): the folder's file is reused from workload to
// workload (workload_folders.h). The agent reads it only after this process has exited.
void WriteExitStatus(const std::string& dir, const std::string& text) {
  const std::string path = dir + "/" + kExitStatusFile;
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return;
  const ssize_t written = write(fd, text.data(), text.size());
  (void)written;  // nothing to do about a failure: the agent reports the status as unknown
  close(fd);
}

// `path` and its parents as folders (mode 0755), like mkdir -p.
bool MakeFolders(const std::string& path) {
  for (size_t slash = path.find('/', 1); slash != std::string::npos;
       slash = path.find('/', slash + 1)) {
    if (mkdir(path.substr(0, slash).c_str(), 0755) != 0 && errno != EEXIST) return false;
  }
  return mkdir(path.c_str(), 0755) == 0 || errno == EEXIST;
}

// This process (and so the workload) in a mount namespace of its own, with DIR's info folder at
// kRunInfoMount; mounts made here never reach the host (MS_SLAVE). "" or why not.
std::string MountRunInfo(const std::string& dir) {
  const std::string info = dir + "/" + kRunInfoFolder;
  struct stat st {};
  if (stat(info.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return "";
  auto failed = [](const std::string& what) { return what + ": " + std::strerror(errno); };
  if (unshare(CLONE_NEWNS) != 0) return failed("cannot make a mount namespace");
  if (mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0) {
    return failed("cannot make / a slave mount");
  }
  if (!MakeFolders(kRunInfoMount)) return failed("cannot make " + std::string(kRunInfoMount));
  if (mount(info.c_str(), kRunInfoMount, nullptr, MS_BIND, nullptr) != 0) {
    return failed("cannot bind-mount the run's info folder");
  }
  return "";
}

}  // namespace

int RunWorkloadShim(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: det-agent %s DIR PROGRAM [ARG...]\n", kWorkloadShimArg);
    return 2;
  }
  const std::string dir = argv[0];
  sigset_t stops;
  sigemptyset(&stops);
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) {
    signal(sig, SIG_IGN);
    sigaddset(&stops, sig);
  }
  if (const std::string why = MountRunInfo(dir); !why.empty()) {
    std::fprintf(stderr,
                 "det: this run has no private %s (%s; the agent needs root for it): "
                 "Determined's library will run in its off-cluster mode\n",
                 kRunInfoMount, why.c_str());
  }
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setsigdefault(&attr, &stops);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
  pid_t child = -1;
  const int rc = posix_spawnp(&child, argv[1], nullptr, &attr, argv + 1, environ);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    std::fprintf(stderr, "cannot start %s: %s\n", argv[1], std::strerror(rc));
    WriteExitStatus(dir, "start-failed " + std::string(argv[1]) + ": " + std::strerror(rc));
    return 127;
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) {
    WriteExitStatus(dir, "signal " + std::to_string(WTERMSIG(status)));
    return 128 + WTERMSIG(status);
  }
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  WriteExitStatus(dir, "exit " + std::to_string(code));
  return code;
}

}  // namespace det::agent
