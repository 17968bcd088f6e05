#include "common/process.h"

#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <iostream>

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

int SetUpLogging(LogConfig config, const std::string& level_flag, const std::string& format_flag) {
  if (!level_flag.empty()) config.level = level_flag;
  if (!format_flag.empty()) config.format = format_flag;
  Status status = InitLogging(config);
  if (!status.ok()) {
    std::cerr << "error: " << status.message() << "\n";
    return 2;
  }
  return 0;
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

}  // namespace det
