#pragma once

// Starting, waiting for and stopping the processes a benchmark drives (the systems it measures,
// their baselines, the commands users type), and picking a free loopback port for them.

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

extern char** environ;

namespace det::bench {

// Starts argv (found on PATH) with stdout and stderr appended to `log` (none: inherited); -1 on
// failure.
inline pid_t Spawn(const std::vector<std::string>& argv, const std::filesystem::path& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (!log.empty()) {
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  if (posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

inline void Terminate(pid_t pid) {
  if (pid <= 0) return;
  kill(pid, SIGTERM);
  waitpid(pid, nullptr, 0);
}

// Starts argv (found on PATH) with `env` added to ours, stdout to `stdout_fd` (-1: /dev/null),
// stderr inherited; its pid, or -1.
inline pid_t SpawnQuiet(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                        int stdout_fd = -1) {
  std::vector<std::string> all_env;
  for (char** e = environ; *e != nullptr; ++e) all_env.emplace_back(*e);
  all_env.insert(all_env.end(), env.begin(), env.end());
  std::vector<char*> args, envp;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  for (const auto& e : all_env) envp.push_back(const_cast<char*>(e.c_str()));
  args.push_back(nullptr);
  envp.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (stdout_fd >= 0) {
    posix_spawn_file_actions_adddup2(&actions, stdout_fd, 1);
  } else {
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  }
  pid_t pid = -1;
  if (posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), envp.data()) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

// Reaps `pid`: whether it was started and exited 0.
inline bool Succeeded(pid_t pid) {
  int status = 0;
  return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
         WEXITSTATUS(status) == 0;
}

inline bool RunToEnd(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  return Succeeded(SpawnQuiet(argv, env));
}

// Runs argv to its end; what it printed, or nothing when it failed (then what it printed goes to
// stderr, unless `quiet`).
inline std::optional<std::string> RunForOutput(const std::vector<std::string>& argv,
                                               const std::vector<std::string>& env,
                                               bool quiet = false) {
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) return std::nullopt;
  const pid_t pid = SpawnQuiet(argv, env, pipe_fds[1]);
  close(pipe_fds[1]);
  std::string output;
  char buffer[4096];
  for (ssize_t n; (n = read(pipe_fds[0], buffer, sizeof buffer)) != 0;) {
    if (n > 0) output.append(buffer, n);
    if (n < 0 && errno != EINTR) break;
  }
  close(pipe_fds[0]);
  if (!Succeeded(pid)) {
    if (!quiet) std::fprintf(stderr, "%s failed; it said: %s\n", argv[0].c_str(), output.c_str());
    return std::nullopt;
  }
  return output;
}

// Spawns and reaps `n` `true` processes, at most `concurrency` at a time: processes per second.
// The floor any dispatcher on this host stands on.
inline double SpawnFloor(int n, int concurrency) {
  const auto start = std::chrono::steady_clock::now();
  int running = 0, started = 0;
  while (started < n || running > 0) {
    while (started < n && running < concurrency) {
      if (SpawnQuiet({"true"}, {}) > 0) ++running;
      ++started;
    }
    if (waitpid(-1, nullptr, 0) > 0) --running;
  }
  return n / std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// A loopback TCP port nothing listens on now (the OS's pick), or `fallback`.
inline int FreePort(int fallback = 18080) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof address;
  const bool bound = bind(fd, reinterpret_cast<sockaddr*>(&address), size) == 0 &&
                     getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) == 0;
  close(fd);
  return bound ? ntohs(address.sin_port) : fallback;
}

}  // namespace det::bench
