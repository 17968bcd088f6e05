#pragma once

// What the server's connections share (internal to server.cc and session.h): the router, the
// limits, the I/O context, the TLS context, the workers, the counters and the per-address
// connection counts. Thread-safe where it says so.

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "common/thread_pool.h"
#include "master/front/http/router.h"
#include "master/front/http/server.h"
#include "master/front/http/static_files.h"

namespace det::master::http {

// Declared so that what sessions use outlives them: the I/O context (whose destruction destroys
// the sessions still waiting in it) goes before the counts and the TLS context, and the workers
// (whose queued jobs post to it) before the I/O context.
class ServerState {
  std::mutex mu_;
  std::unordered_map<std::string, int> per_peer_;
  struct Quiet {
    std::chrono::steady_clock::time_point last{};
    int64_t left_out = 0;
  };
  std::unordered_map<std::string, Quiet> quiet_;

 public:
  ServerState(const Router& router, ServerOptions options);

  std::atomic<int64_t> open{0};
  std::atomic<int64_t> refusing{0};  // refused connections still being answered
  std::atomic<int64_t> refused{0};
  std::atomic<int64_t> timed_out{0};
  std::atomic<int64_t> parked{0};
  std::atomic<int64_t> waiting{0};

  const Router& router;
  const ServerOptions options;
  const ServerLimits& limits() const { return options.limits; }
  StaticFiles files;
  std::unique_ptr<boost::asio::ssl::context> ssl;  // null: plaintext
  boost::asio::io_context io;
  std::unique_ptr<ThreadPool> workers;

  // Counts a new connection from `peer`; false (and why, for the 503) past a cap. Thread-safe.
  bool Admit(const std::string& peer, std::string* why);
  // Its end. Thread-safe.
  void Release(const std::string& peer);
  // Logs `line` as a warning unless one of the same `kind` was logged in the last 10 s (then it
  // is counted and the next line says how many were left out). Thread-safe.
  void WarnLimited(const std::string& kind, const std::string& line);
};

// Starts serving an accepted connection from `peer`: plaintext (session_plain.cc) or TLS
// (session_tls.cc), each in a file of its own so the two compile side by side. `refusal`
// non-empty: it is answered 503 with that reason and closed.
void StartPlainSession(ServerState& state, boost::asio::ip::tcp::socket socket, std::string peer,
                       std::string refusal);
void StartTlsSession(ServerState& state, boost::asio::ip::tcp::socket socket, std::string peer,
                     std::string refusal);

}  // namespace det::master::http
