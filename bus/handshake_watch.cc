#include "bus/handshake_watch.h"

#include <atomic>
#include <cstring>

namespace det::bus {
namespace {

std::string MonitorEndpoint() {
  static std::atomic<uint64_t> next{0};
  return "inproc://det-handshake-watch-" + std::to_string(next++);
}

constexpr int kWatchedEvents =
    ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL |
    ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH;

}  // namespace

std::string Describe(HandshakeFailure failure, const std::string& endpoint) {
  switch (failure) {
    case HandshakeFailure::kServerRequiresCurve:
      return endpoint + " requires CURVE keys and this client connected in plaintext";
    case HandshakeFailure::kServerKeyMismatch:
      return endpoint +
             " ended the CURVE handshake: its public key does not match the one this client was "
             "given";
    case HandshakeFailure::kClientKeyRefused:
      return endpoint +
             " does not know this client's public key (or does not admit it on this port)";
    case HandshakeFailure::kServerIsPlaintext:
      return endpoint + " runs in plaintext and this client connected with CURVE keys";
  }
  return endpoint + ": handshake failed";
}

HandshakeWatch::HandshakeWatch(zmq::context_t& context, zmq::socket_t& socket,
                               SocketSecurity::Mode mode)
    : socket_(socket), monitor_(context, zmq::socket_type::pair), mode_(mode) {
  const std::string endpoint = MonitorEndpoint();
  if (zmq_socket_monitor(socket_.handle(), endpoint.c_str(), kWatchedEvents) == 0) {
    monitor_.connect(endpoint);
  }
  monitor_.set(zmq::sockopt::linger, 0);
}

HandshakeWatch::~HandshakeWatch() { zmq_socket_monitor(socket_.handle(), nullptr, 0); }

std::optional<HandshakeFailure> HandshakeWatch::Read() {
  zmq::message_t event;
  zmq::message_t address;
  while (monitor_.recv(event, zmq::recv_flags::dontwait)) {
    if (event.more()) (void)monitor_.recv(address, zmq::recv_flags::dontwait);
    if (event.size() < 6) continue;
    uint16_t kind = 0;
    uint32_t value = 0;
    std::memcpy(&kind, event.data(), 2);
    std::memcpy(&value, static_cast<const char*>(event.data()) + 2, 4);
    switch (kind) {
      case ZMQ_EVENT_HANDSHAKE_SUCCEEDED:
        silent_ends_ = 0;
        break;
      case ZMQ_EVENT_HANDSHAKE_FAILED_AUTH:
        zap_status_ = value;
        return HandshakeFailure::kClientKeyRefused;
      case ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL:
        if (value == ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH) {
          return mode_ == SocketSecurity::Mode::kPlaintext ? HandshakeFailure::kServerRequiresCurve
                                                           : HandshakeFailure::kServerIsPlaintext;
        }
        [[fallthrough]];
      case ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL:
        if (++silent_ends_ >= kSilentEndsNeeded) {
          return mode_ == SocketSecurity::Mode::kPlaintext ? HandshakeFailure::kServerRequiresCurve
                                                           : HandshakeFailure::kServerKeyMismatch;
        }
        break;
      default:
        break;
    }
  }
  return std::nullopt;
}

}  // namespace det::bus
