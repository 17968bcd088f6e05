#include "agent/workload_shim.h"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

extern char** environ;

namespace det::agent {
namespace {

void WriteExitStatus(const std::string& dir, const std::string& text) {
  const std::string path = dir + "/" + kExitStatusFile;
  const std::string tmp = path + ".tmp";
  if (FILE* f = std::fopen(tmp.c_str(), "w")) {
    std::fputs(text.c_str(), f);
    std::fclose(f);
    std::rename(tmp.c_str(), path.c_str());
  }
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
