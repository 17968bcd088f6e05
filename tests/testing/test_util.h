#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <thread>

namespace det::testing {

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

// Checks `done` every 100 ms until it returns true or `timeout` passes; returns done(). For
// tests of real processes, whose state changes on their own.
inline bool Eventually(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
  return PumpUntil([] { std::this_thread::sleep_for(std::chrono::milliseconds(99)); }, done,
                   timeout);
}

// A unique inproc endpoint for one test.
inline std::string InprocEndpoint(const std::string& name) {
  static int counter = 0;
  return "inproc://test-" + name + "-" + std::to_string(++counter);
}

}  // namespace det::testing
