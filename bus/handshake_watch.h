#pragma once

// Why a connection's security handshake failed, as a client can tell it within milliseconds
// instead of waiting out a request's timeout (libzmq reports handshakes on a socket monitor).

#include <optional>
#include <string>
#include <zmq.hpp>

#include "bus/security.h"

namespace det::bus {

enum class HandshakeFailure {
  // The client spoke plaintext and the server ended the handshake: it requires CURVE.
  kServerRequiresCurve,
  // The client spoke CURVE and the server ended the handshake without a word: the server could
  // not read the client's HELLO, which is what a wrong server public key looks like.
  kServerKeyMismatch,
  // The server's ZAP handler refused the client's public key (unknown, or not allowed on this
  // port); `status` holds the ZAP status code.
  kClientKeyRefused,
  // The client spoke CURVE and the server plaintext.
  kServerIsPlaintext,
};

// One line naming what failed at `endpoint`, for a log or an error.
std::string Describe(HandshakeFailure failure, const std::string& endpoint);

// Watches one socket's handshakes (a monitor on an inproc PAIR of its own). Add item() to the
// socket's poll; after a poll, Read() drains the events and returns a failure once it is certain:
// at once for a refused key or a mechanism the server does not speak, after `kSilentEndsNeeded`
// silent ends in a row for the other two (a master that dies mid-handshake ends one too). A
// handshake that succeeds resets the count.
//
// Threading: the thread that owns the socket. The watch must be destroyed before the socket.
class HandshakeWatch {
 public:
  static constexpr int kSilentEndsNeeded = 2;

  HandshakeWatch(zmq::context_t& context, zmq::socket_t& socket, SocketSecurity::Mode mode);
  ~HandshakeWatch();
  HandshakeWatch(const HandshakeWatch&) = delete;
  HandshakeWatch& operator=(const HandshakeWatch&) = delete;

  zmq::pollitem_t item() { return {monitor_.handle(), 0, ZMQ_POLLIN, 0}; }
  std::optional<HandshakeFailure> Read();
  // The ZAP status of the last kClientKeyRefused (400, 500, ...).
  uint32_t zap_status() const { return zap_status_; }

 private:
  zmq::socket_t& socket_;
  zmq::socket_t monitor_;
  SocketSecurity::Mode mode_;
  int silent_ends_ = 0;
  uint32_t zap_status_ = 0;
};

}  // namespace det::bus
