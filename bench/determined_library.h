#pragma once

// What the benchmarks that run Determined's own library share: where the library is, and timing
// a command.

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "tests/testing/test_util.h"

namespace det::bench {

// Determined's library (../shared/conformance, or DET_CONFORMANCE_DIR): its harness folder, or ""
// when /usr/bin/python3 cannot import it there.
inline std::string DeterminedLibrary() {
  const std::filesystem::path harness =
      det::testing::BesideCheckout(
          DET_SOURCE_DIR_DEFAULT,
          std::filesystem::path("shared") / "conformance" / "determined-0.38.1",
          "DET_CONFORMANCE_DIR") /
      "harness";
  const std::string probe = "PYTHONPATH='" + harness.string() +
                            "' /usr/bin/python3 -c 'import determined' > /dev/null 2>&1";
  return std::system(probe.c_str()) == 0 ? harness.string() : "";
}

// Runs `command` (sh -c); its seconds, or -1 when it failed.
inline double Timed(const std::string& command) {
  const auto start = std::chrono::steady_clock::now();
  if (std::system(command.c_str()) != 0) return -1;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace det::bench
