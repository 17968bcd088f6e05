#include "common/process.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <thread>

#include "common/clock.h"

extern char** environ;

namespace det {
namespace {

std::atomic<bool> g_stop{false};

void OnSignal(int) { g_stop.store(true); }

}  // namespace

std::atomic<bool>& InstallStopSignals() {
  struct sigaction action {};
  action.sa_handler = OnSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  return g_stop;
}

std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "localhost";
  return name;
}

uint64_t RaiseOpenFileLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 0;
  if (limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
  return limit.rlim_cur;
}

void InitSpawnWithDefaultSignals(posix_spawnattr_t& attr, short flags) {
  posix_spawnattr_init(&attr);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int sig : {SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGCHLD}) sigaddset(&defaults, sig);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, flags | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
}

Result<pid_t> SpawnPrepared(const std::vector<std::string>& argv,
                            const std::vector<std::string>& env,
                            posix_spawn_file_actions_t& actions, posix_spawnattr_t& attr) {
  std::vector<char*> args, envp;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, args[0], &actions, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return Unavailable("cannot start " + argv[0] + ": " + std::strerror(rc));
  return pid;
}

Result<pid_t> SpawnDetached(const std::vector<std::string>& argv,
                            const std::map<std::string, std::string>& extra_env,
                            const std::string& log_path) {
  if (argv.empty() || access(argv[0].c_str(), X_OK) != 0) {
    return NotFound((argv.empty() ? std::string("(no program)") : argv[0]) +
                    " is not an executable file");
  }
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string entry = *e;
    if (!extra_env.contains(entry.substr(0, entry.find('=')))) env.push_back(entry);
  }
  for (const auto& [key, value] : extra_env) env.push_back(key + "=" + value);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, log_path.c_str(), O_WRONLY | O_APPEND | O_CREAT,
                                   0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  // Nothing else of this process (sockets, files) goes to a program that may outlive it.
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK);
  return SpawnPrepared(argv, env, actions, attr);
}

namespace {

std::map<std::string, std::string> DetEnvironment(const std::filesystem::path& proc) {
  std::ifstream in(proc / "environ", std::ios::binary);
  std::map<std::string, std::string> env;
  for (std::string entry; std::getline(in, entry, '\0');) {
    const size_t eq = entry.find('=');
    if (eq != std::string::npos && entry.starts_with("DET_")) {
      env[entry.substr(0, eq)] = entry.substr(eq + 1);
    }
  }
  return env;
}

// What /proc/PID/stat says of a process: its state, process group and session.
struct ProcessStat {
  char state = 0;
  long group = 0;
  long session = 0;
};
std::optional<ProcessStat> ReadProcessStat(const std::filesystem::path& proc) {
  std::ifstream in(proc / "stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t paren = stat.rfind(')');
  if (paren == std::string::npos) return std::nullopt;
  std::istringstream fields(stat.substr(paren + 1));
  ProcessStat read;
  long parent = 0;
  fields >> read.state >> parent >> read.group >> read.session;
  if (!fields) return std::nullopt;
  return read;
}

// Whether `pid` leads its own session and has not exited.
bool LiveSessionLeader(const std::filesystem::path& proc, pid_t pid) {
  const auto stat = ReadProcessStat(proc);
  return stat && stat->state != 'Z' && stat->session == pid;
}

// Whether `pid` has not exited, leads its process group and runs `program` (its executable's file
// name, also once the file is replaced).
bool LiveGroupLeaderRunning(const std::filesystem::path& proc, pid_t pid,
                            const std::string& program) {
  const auto stat = ReadProcessStat(proc);
  if (!stat || stat->state == 'Z' || stat->group != pid) return false;
  std::error_code unreadable;
  std::string exe = std::filesystem::read_symlink(proc / "exe", unreadable).filename().string();
  if (exe.ends_with(" (deleted)")) exe.resize(exe.size() - std::strlen(" (deleted)"));
  return !unreadable && exe == program;
}

// The numbered entries of /proc: every process.
template <typename Visit>
void ForEachProcess(Visit&& visit) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    visit(entry.path(), static_cast<pid_t>(std::stol(name)));
  }
}

}  // namespace

std::vector<TaggedProcess> FindSessionLeaders(const std::string& key, const std::string& value) {
  std::vector<TaggedProcess> found;
  ForEachProcess([&](const std::filesystem::path& proc, pid_t pid) {
    auto env = DetEnvironment(proc);
    auto tag = env.find(key);
    if (tag == env.end() || tag->second != value) return;
    if (LiveSessionLeader(proc, pid)) found.push_back({pid, std::move(env)});
  });
  return found;
}

std::vector<pid_t> ProcessGroupsLedBy(const std::string& program, const std::string& folder) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path root = fs::weakly_canonical(folder, ec);
  std::vector<pid_t> found;
  if (ec || root.empty()) return found;
  ForEachProcess([&](const fs::path& proc, pid_t pid) {
    if (!LiveGroupLeaderRunning(proc, pid, program)) return;
    std::error_code unreadable;
    const fs::path cwd = fs::read_symlink(proc / "cwd", unreadable);
    if (unreadable) return;
    const auto [inside, rest] = std::mismatch(root.begin(), root.end(), cwd.begin(), cwd.end());
    if (inside == root.end()) found.push_back(pid);
  });
  return found;
}

bool LeadsGroupIn(pid_t pid, const std::string& program, const std::string& folder) {
  const std::filesystem::path proc = "/proc/" + std::to_string(pid);
  struct stat cwd {
  }, wanted{};
  return pid > 0 && LiveGroupLeaderRunning(proc, pid, program) &&
         stat((proc / "cwd").c_str(), &cwd) == 0 && stat(folder.c_str(), &wanted) == 0 &&
         cwd.st_dev == wanted.st_dev && cwd.st_ino == wanted.st_ino;
}

bool ProcessRunning(pid_t pid) {
  if (pid <= 0) return false;
  const auto stat = ReadProcessStat("/proc/" + std::to_string(pid));
  return stat && stat->state != 'Z' && stat->state != 'X';
}

void StopProcessGroups(const std::vector<pid_t>& groups, std::chrono::milliseconds grace) {
  for (pid_t group : groups) kill(-group, SIGTERM);
  const Clock& clock = RealClock::Instance();
  const MonoTime deadline = clock.Now() + grace;
  auto any_left = [&] {  // a leader that has not exited (a zombie has)
    for (pid_t group : groups) {
      const auto stat = ReadProcessStat("/proc/" + std::to_string(group));
      if (stat && stat->state != 'Z') return true;
    }
    return false;
  };
  while (any_left() && clock.Now() < deadline) clock.SleepFor(std::chrono::milliseconds(50));
  for (pid_t group : groups) kill(-group, SIGKILL);
}

std::string SiblingProgram(const std::string& folder, const std::string& name) {
  namespace fs = std::filesystem;
  const char* bin = std::getenv("DET_BIN_DIR");
  if (bin && *bin) return std::string(bin) + "/" + name;
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec).parent_path();
  if (fs::exists(self / name)) return (self / name).string();
  return (self.parent_path() / folder / name).string();
}

}  // namespace det
