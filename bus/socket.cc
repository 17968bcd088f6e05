#include "bus/socket.h"

#include <cerrno>

#include "common/retry.h"

namespace det::bus {

zmq::socket_t MakeSocket(zmq::context_t& context, zmq::socket_type type,
                         const SocketLimits& limits) {
  zmq::socket_t socket(context, type);
  socket.set(zmq::sockopt::linger, 0);
  socket.set(zmq::sockopt::maxmsgsize, limits.max_message_bytes);
  socket.set(zmq::sockopt::sndhwm, limits.send_hwm);
  socket.set(zmq::sockopt::rcvhwm, limits.receive_hwm);
  return socket;
}

Result<std::string> Bind(zmq::socket_t& socket, const std::string& endpoint,
                         const SocketSecurity& security) {
  std::string target = endpoint;
  if (target.starts_with("tcp://") && target.ends_with(":0")) {
    target.replace(target.size() - 1, 1, "*");
  }
  ApplySecurity(socket, security, target);
  // A fixed port still held (a restarted process's predecessor, a passing outgoing connection
  // given it as its ephemeral port) is tried again for a while before the bind fails.
  Result<std::string> bound = Unavailable("cannot bind " + endpoint);
  RetryEvery(std::chrono::milliseconds(200), kBindRetryFor, RealClock::Instance(), [&] {
    try {
      socket.bind(target);
      bound = socket.get(zmq::sockopt::last_endpoint);
      return true;
    } catch (const zmq::error_t& e) {
      bound = Unavailable("cannot bind " + endpoint + ": " + e.what());
      return e.num() != EADDRINUSE;
    }
  });
  return bound;
}

Status Connect(zmq::socket_t& socket, const std::string& endpoint, const SocketSecurity& security) {
  ApplySecurity(socket, security, endpoint);
  try {
    socket.connect(endpoint);
  } catch (const zmq::error_t& e) {
    return InvalidArgument("cannot connect to " + endpoint + ": " + e.what());
  }
  return Status::Ok();
}

int Poll(zmq::pollitem_t* items, size_t count, std::chrono::milliseconds timeout) {
  try {
    return zmq::poll(items, count, timeout);
  } catch (const zmq::error_t& e) {
    if (e.num() == EINTR) return 0;
    throw;
  }
}

std::string TcpEndpoint(const std::string& host, int port) {
  return "tcp://" + host + ":" + std::to_string(port);
}

}  // namespace det::bus
