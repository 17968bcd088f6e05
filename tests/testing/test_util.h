#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace det::testing {

// The whole of a /proc file (cmdline, environ, ...) of a process that may end while it is read:
// what was read before it ended, "" when it had already ended. (std::ifstream throws then:
// libstdc++'s underflow turns read's ESRCH into an exception.)
inline std::string ReadProcFile(const std::filesystem::path& path) {
  std::string text;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return text;
  char buffer[4096];
  for (ssize_t n; (n = read(fd, buffer, sizeof buffer)) > 0;) text.append(buffer, n);
  close(fd);
  return text;
}

// The bytes of `file` ("" when it cannot be read).
inline std::string ReadWholeFile(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Writes `size` pseudo-random bytes (seeded by the size: the same size, the same bytes) to
// `path`, and returns it.
inline std::filesystem::path WriteRandomFile(const std::filesystem::path& path, size_t size) {
  std::mt19937_64 random(size);
  std::string bytes(size, '\0');
  for (char& c : bytes) c = static_cast<char>(random());
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

// The uuids of the COMPLETED checkpoints in `det --json experiment list-checkpoints`' output.
inline std::set<std::string> CompletedCheckpoints(const std::string& list_checkpoints_json) {
  std::set<std::string> uuids;
  const nlohmann::json listed = nlohmann::json::parse(list_checkpoints_json, nullptr, false);
  if (!listed.is_array()) return uuids;
  for (const auto& c : listed) {
    if (c.is_object() && c.value("state", "") == "COMPLETED") uuids.insert(c.value("uuid", ""));
  }
  return uuids;
}

// Calls `step` until `done` returns true or `timeout` of real time passes; returns done().
// For tests whose sockets are real but whose protocol time is simulated: `step` pumps sockets.
inline bool PumpUntil(const std::function<void()>& step, const std::function<bool()>& done,
                      std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    step();
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return done();
}

// Checks `done` every millisecond until it returns true or `timeout` of real time passes; returns
// done(). For a condition another thread makes true (a subscription in place, a message read):
// the test goes on as soon as it holds, where a fixed sleep would guess.
inline bool WaitFor(const std::function<bool()>& done,
                    std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
  return PumpUntil([] {}, done, timeout);
}

// Checks `done` every 100 ms until it returns true or `timeout` passes; returns done(). For
// tests of real processes, whose state changes on their own.
inline bool Eventually(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
  return PumpUntil([] { std::this_thread::sleep_for(std::chrono::milliseconds(99)); }, done,
                   timeout);
}

// A unique inproc endpoint for one test.
// `relative` (e.g. shared/testdata/...) beside the checkout `source_dir` or beside one of its
// parents, or the variable `override_env` when set; the first candidate when none exists (for a
// skip message naming it).
inline std::filesystem::path BesideCheckout(const std::filesystem::path& source_dir,
                                            const std::filesystem::path& relative,
                                            const char* override_env) {
  namespace fs = std::filesystem;
  if (const char* dir = std::getenv(override_env)) return dir;
  for (fs::path dir = fs::absolute(source_dir); dir.has_relative_path(); dir = dir.parent_path()) {
    if (fs::exists(dir.parent_path() / relative)) return dir.parent_path() / relative;
  }
  return source_dir / ".." / relative;
}

inline std::string InprocEndpoint(const std::string& name) {
  static int counter = 0;
  return "inproc://test-" + name + "-" + std::to_string(++counter);
}

// A TCP port on 127.0.0.1 that nothing holds now, below Linux's ephemeral range (32768 and up by
// default): a port a test restarts a server on (kill -9, then the same port) is then never taken
// meanwhile as another socket's ephemeral local port, as a port 0 picked can be under a loaded
// run. Random, so that parallel test processes rarely pick the same; 0 when none was found.
inline int PortBelowEphemeralRange() {
  static std::mt19937 random(std::random_device{}());
  std::uniform_int_distribution<int> pick(20000, 32000);
  for (int attempt = 0; attempt < 100; ++attempt) {
    const int port = pick(random);
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return 0;
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const bool free = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
    ::close(fd);
    if (free) return port;
  }
  return 0;
}

// The "result" of each line of a Determined stream (NDJSON of {"result": ...}); a line that is not
// one (an {"error"} line, or text that is no JSON) becomes a null that fails any check on it.
inline std::vector<nlohmann::json> NdjsonResults(const std::string& text) {
  std::vector<nlohmann::json> results;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    const nlohmann::json item = nlohmann::json::parse(line, nullptr, false);
    results.push_back(item.is_object() && item.contains("result") ? item["result"]
                                                                  : nlohmann::json());
  }
  return results;
}

}  // namespace det::testing
