#pragma once

#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "bus/security.h"

namespace det::bus {

// The ZAP handler (RFC 27) for one ZeroMQ context: admits a CURVE client on the allow-list to a
// socket whose role (ZAP domain) the key may take, and refuses everything else with 400 (logged,
// rate-limited, naming the key and the port's role). An admitted client's key (Z85) becomes the
// User-Id of every message it sends (ClientKeyOf). Runs its own thread from construction until
// destruction. Must be constructed before any CURVE server socket of that context binds.
class ZapHandler {
 public:
  // `open_roles`: the ports (roles) any CURVE key may use, allow-listed or not.
  ZapHandler(zmq::context_t& context, std::vector<AllowedClient> allowed,
             std::set<std::string> open_roles = {});
  // Every key may take every role (tests and benchmarks).
  ZapHandler(zmq::context_t& context, const std::vector<std::string>& allowed_public_keys);
  ~ZapHandler();
  ZapHandler(const ZapHandler&) = delete;
  ZapHandler& operator=(const ZapHandler&) = delete;

  // Admits `public_key` on every port.
  void Allow(const std::string& public_key);
  uint64_t denied() const { return denied_.load(); }
  uint64_t admitted() const { return admitted_.load(); }

 private:
  void Run();
  // "" when the key may use a socket of ZAP domain `domain`, else why not.
  std::string WhyRefused(const std::string& z85, const std::string& domain) const;

  zmq::socket_t socket_;
  mutable std::mutex mu_;
  std::map<std::string, std::set<std::string>> allowed_;  // key → roles (none: all)
  const std::set<std::string> open_roles_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> denied_{0};
  std::atomic<uint64_t> admitted_{0};
  std::thread thread_;
};

// The CURVE public key (Z85) a ZapHandler admitted the sender of `message` with; "" when the
// socket is not under CURVE.
std::string ClientKeyOf(const zmq::message_t& message);

}  // namespace det::bus
