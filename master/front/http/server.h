#pragma once

// The master's one HTTP server: the REST API, the Core API trial code calls, the WebUI's files and
// openapi.json, on master.yaml's `port`, over TLS when `security.tls` names a certificate.
//
// Event-driven (Boost.Beast over Asio, README.md says why): a few I/O threads read and write every
// connection; handlers that may block run on a fixed pool of workers; long polls (parked
// requests) and NDJSON follows hold no thread while they wait. Every connection is bounded: its
// header must arrive within header_timeout, its body within body_timeout, the next request on a
// kept-alive connection within idle_timeout; past max_connections in all or
// max_connections_per_peer from one address a connection is answered 503 and closed at once (and
// a line is logged, at most every 10 s per cause).

#include <cstdint>
#include <memory>
#include <string>

#include "common/clock.h"
#include "common/status.h"
#include "master/front/http/router.h"

namespace det::master::http {

// master.yaml's `http:` section (every field optional; the defaults hold for most clusters).
struct ServerLimits {
  Duration header_timeout = std::chrono::seconds(10);  // a request's header, from its first byte
  Duration body_timeout = std::chrono::seconds(60);    // its body, after the header
  Duration idle_timeout = std::chrono::seconds(60);    // a kept-alive connection's next request
  Duration write_timeout = std::chrono::seconds(60);   // an answer, or one piece of a stream
  int max_connections = 10000;                         // open at once, in all
  int max_connections_per_peer = 1000;                 // open at once from one address
  int workers = 16;                                    // threads for handlers that may block
  int max_waiting = 4096;                              // requests queued for a worker: past it, 503
  int max_parked = 20000;                              // long polls waiting at once: past it, 503
};

struct ServerOptions {
  ServerLimits limits;
  std::string tls_cert;  // PEM files; both set: HTTPS only
  std::string tls_key;
  std::string webui_dir;  // the WebUI's files, served at `/` before any route; "": none
};

class HttpServer {
 public:
  // `router` must outlive the server.
  HttpServer(const Router& router, ServerOptions options);
  ~HttpServer();  // Stop()s
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Listens on host:port (0: a free port; a port still held is tried again for
  // bus::kBindRetryFor); the port. InvalidArgument naming security.tls when the certificate or key
  // cannot be used, Unavailable naming the address when it cannot listen.
  Result<int> Bind(const std::string& host, int port);
  void Start();
  // Closes every connection; parked requests and streams end with them. Idempotent.
  void Stop();

  struct Stats {
    int64_t open = 0;       // connections open now
    int64_t refused = 0;    // connections answered 503 for a cap, since start
    int64_t timed_out = 0;  // connections closed for a timeout, since start
    int64_t parked = 0;     // requests parked now
    int64_t waiting = 0;    // requests waiting for a worker now
  };
  Stats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace det::master::http
