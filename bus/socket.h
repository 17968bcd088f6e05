#pragma once

#include <chrono>
#include <string>
#include <zmq.hpp>

#include "bus/security.h"
#include "common/status.h"

namespace det::bus {

// Per-socket limits. Frames larger than max_message_bytes make libzmq drop the connection that
// sent them (ZMQ_MAXMSGSIZE), so a peer cannot make a process buffer unbounded input.
struct SocketLimits {
  int64_t max_message_bytes = 16 << 20;
  int send_hwm = 100000;
  int receive_hwm = 100000;
};

// A socket with the bus's defaults: linger 0 (never block shutdown), the given limits.
zmq::socket_t MakeSocket(zmq::context_t& context, zmq::socket_type type,
                         const SocketLimits& limits = {});

// How long a bind to a port in use is tried again (every 200 ms) before it fails.
inline constexpr std::chrono::seconds kBindRetryFor{5};

// Binds with `security` applied. "tcp://host:0" binds a free port; a port in use is tried again
// for kBindRetryFor. Returns the endpoint actually bound (with the real port), or
// InvalidArgument/Unavailable naming the endpoint and the reason.
Result<std::string> Bind(zmq::socket_t& socket, const std::string& endpoint,
                         const SocketSecurity& security);
Status Connect(zmq::socket_t& socket, const std::string& endpoint, const SocketSecurity& security);

// zmq::poll that treats an interrupted wait (a signal arrived) as "nothing ready" instead of
// throwing, so signal handlers can stop a loop cleanly.
int Poll(zmq::pollitem_t* items, size_t count, std::chrono::milliseconds timeout);

// "tcp://<host>:<port>".
std::string TcpEndpoint(const std::string& host, int port);

}  // namespace det::bus
