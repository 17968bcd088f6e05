#include "agent/shim/workload_shim.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

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

// This process (and so the workload) in a mount namespace of its own, with DIR's run folder at
// kRunMount and DIR/.det hidden under an empty read-only tmpfs (its run folder's workdir links
// back to DIR: seen from DIR it would be a loop), DET_INFO_DIR then naming kRunInfoMount; mounts
// made here never reach the host (MS_SLAVE). "" or why not.
std::string MountRunFolder(const std::string& dir) {
  const std::string run = dir + "/" + kRunFolder;
  struct stat st {};
  if (stat(run.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return "";
  auto failed = [](const std::string& what) { return what + ": " + std::strerror(errno); };
  if (unshare(CLONE_NEWNS) != 0) return failed("cannot make a mount namespace");
  if (mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0) {
    return failed("cannot make / a slave mount");
  }
  if (!MakeFolders(kRunMount)) return failed("cannot make " + std::string(kRunMount));
  if (mount(run.c_str(), kRunMount, nullptr, MS_BIND, nullptr) != 0) {
    return failed("cannot bind-mount the run's folder");
  }
  const std::string hidden = dir + "/" + kRunFolderParent;
  if (mount("tmpfs", hidden.c_str(), "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
            "size=4k,mode=0555") != 0) {
    return failed("cannot hide " + hidden);
  }
  setenv("DET_INFO_DIR", kRunInfoMount, 1);
  return "";
}

bool ParseId(const std::string& text, unsigned long* out) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) return false;
  errno = 0;
  *out = std::strtoul(text.c_str(), nullptr, 10);
  return errno == 0 && *out <= 0x7fffffffUL;
}

// The child's half of SpawnAs, between vfork and exec. It shares the shim's memory until it execs
// or exits, so it makes system calls only (the raw set*id calls: glibc's act on every thread of
// the process they believe they are in). Why it failed goes to `report` (closed by a successful
// exec): a pipe works whether the child shares memory (vfork) or not (TSan makes vfork a fork).
[[noreturn]] void BecomeAndExec(char** argv, const RunAs& as, const sigset_t& stops, int report) {
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sigismember(&stops, sig) == 1) signal(sig, SIG_DFL);
  }
  umask(077);  // what the task makes (checkpoints in a shared folder too) is its account's only
  if (syscall(SYS_setgroups, as.groups.size(), as.groups.data()) == 0 &&
      syscall(SYS_setresgid, as.gid, as.gid, as.gid) == 0 &&
      syscall(SYS_setresuid, as.uid, as.uid, as.uid) == 0) {
    execvp(argv[0], argv);
  }
  const int failure = errno;
  const ssize_t sent = write(report, &failure, sizeof failure);
  (void)sent;
  _exit(127);
}

// Starts argv as `as`: groups, gid, then uid are set in the child before exec. The child's pid, or
// -1 with *error set (why the switch or the exec failed). vfork, as posix_spawn does, rather than
// fork: copying the shim's address space for every workload cost a root agent's job arrays about
// a tenth of their throughput.
pid_t SpawnAs(char** argv, const RunAs& as, const sigset_t& stops, int* error) {
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) {
    *error = errno;
    return -1;
  }
  const pid_t pid = vfork();
  if (pid == 0) BecomeAndExec(argv, as, stops, report[1]);
  const int spawn_errno = errno;
  close(report[1]);
  if (pid < 0) {
    close(report[0]);
    *error = spawn_errno;
    return -1;
  }
  int failure = 0;
  ssize_t got;
  while ((got = read(report[0], &failure, sizeof failure)) < 0 && errno == EINTR) {
  }
  close(report[0]);
  if (got == static_cast<ssize_t>(sizeof failure)) {  // exec never happened
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    *error = failure;
    return -1;
  }
  return pid;
}

// Reads and removes kRunAsVariable. Whether to switch (*as filled): only as root, to another uid.
bool TakeRunAs(RunAs* as) {
  const char* text = std::getenv(kRunAsVariable);
  if (text == nullptr) return false;
  const std::string spec = text;
  unsetenv(kRunAsVariable);
  if (!ParseRunAs(spec, as)) {
    std::fprintf(stderr, "det: ignoring a malformed %s\n", kRunAsVariable);
    return false;
  }
  if (geteuid() != 0) {
    if (getuid() != as->uid) {
      std::fprintf(stderr,
                   "det: the agent does not run as root, so this task runs as its user (uid %u), "
                   "not as %s (uid %u)\n",
                   static_cast<unsigned>(getuid()), as->user.c_str(),
                   static_cast<unsigned>(as->uid));
    }
    return false;
  }
  setenv("HOME", as->home.c_str(), 1);
  setenv("USER", as->user.c_str(), 1);
  setenv("LOGNAME", as->user.c_str(), 1);
  return true;
}

}  // namespace

bool ParseRunAs(const std::string& text, RunAs* out) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (int i = 0; i < 4; ++i) {  // the home may not hold ':'; the user is the rest
    const size_t colon = text.find(':', start);
    if (colon == std::string::npos) return false;
    parts.push_back(text.substr(start, colon - start));
    start = colon + 1;
  }
  parts.push_back(text.substr(start));
  unsigned long uid = 0, gid = 0;
  if (!ParseId(parts[0], &uid) || !ParseId(parts[1], &gid) || parts[4].empty()) return false;
  RunAs as;  // *out changes only when the whole text is read
  as.uid = static_cast<uid_t>(uid);
  as.gid = static_cast<gid_t>(gid);
  size_t from = 0;
  while (from <= parts[2].size()) {
    const size_t comma = std::min(parts[2].find(',', from), parts[2].size());
    unsigned long group = 0;
    if (!ParseId(parts[2].substr(from, comma - from), &group)) return false;
    as.groups.push_back(static_cast<gid_t>(group));
    from = comma + 1;
  }
  as.home = parts[3];
  as.user = parts[4];
  *out = std::move(as);
  return true;
}

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
  if (const std::string why = MountRunFolder(dir); !why.empty()) {
    std::fprintf(stderr,
                 "det: this run has no private %s (%s; the agent needs root for it): "
                 "Determined's library will run in its off-cluster mode\n",
                 kRunMount, why.c_str());
  }
  RunAs as;
  pid_t child = -1;
  int rc = 0;
  if (TakeRunAs(&as)) {
    child = SpawnAs(argv + 1, as, stops, &rc);
  } else {
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setsigdefault(&attr, &stops);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
    rc = posix_spawnp(&child, argv[1], nullptr, &attr, argv + 1, environ);
    posix_spawnattr_destroy(&attr);
  }
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
