#pragma once

#include <atomic>
#include <string>

#include "common/logging.h"

namespace det {

// Installs SIGINT/SIGTERM handlers that set the returned flag (and nothing else), so a main loop
// can stop cleanly. Idempotent.
std::atomic<bool>& InstallStopSignals();

// Raises the soft limit on open files to the hard limit (a master holds one connection per agent)
// and returns the new soft limit.
uint64_t RaiseOpenFileLimit();

// Applies the --log-level/--log-format flags (empty: keep the config's value) and installs logging.
// Returns the exit code to use on failure (2) after printing the error, or 0.
int SetUpLogging(LogConfig config, const std::string& level_flag, const std::string& format_flag);

// This host's name, for default agent ids.
std::string HostName();

}  // namespace det
