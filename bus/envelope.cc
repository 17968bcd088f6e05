#include "bus/envelope.h"

#include <cctype>

namespace det::bus {
namespace {

bool IsValidType(std::string_view type) {
  if (type.empty() || type.size() > kMaxTypeLength) return false;
  for (char c : type) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

bool ReceiveFrames(zmq::socket_t& socket, std::vector<zmq::message_t>* frames) {
  frames->clear();
  zmq::message_t frame;
  if (!socket.recv(frame, zmq::recv_flags::dontwait)) return false;
  bool more = frame.more();
  frames->push_back(std::move(frame));
  while (more) {
    zmq::message_t next;
    // The rest of a multipart message is already here: ZeroMQ delivers it atomically.
    (void)socket.recv(next, zmq::recv_flags::none);
    more = next.more();
    if (frames->size() <= kMaxFrames) frames->push_back(std::move(next));
  }
  return true;
}

Result<Envelope> ParseEnvelope(std::vector<zmq::message_t>& frames, size_t first) {
  if (frames.size() != first + 3) {
    return InvalidArgument("expected " + std::to_string(first + 3) + " frames, got " +
                           std::to_string(frames.size()));
  }
  Envelope envelope;
  envelope.type.assign(frames[first].data<char>(), frames[first].size());
  if (!IsValidType(envelope.type)) {
    return InvalidArgument("bad message type \"" + Printable(envelope.type) + "\"");
  }
  std::string_view header_bytes(frames[first + 1].data<char>(), frames[first + 1].size());
  if (Status header = DecodeInto(header_bytes, &envelope.header, "header"); !header.ok()) {
    return header.WithContext(envelope.type);
  }
  if (envelope.header.version != kProtocolVersion) {
    return InvalidArgument(envelope.type + ": protocol version " +
                           std::to_string(envelope.header.version) + ", this build speaks " +
                           std::to_string(kProtocolVersion));
  }
  envelope.body = std::move(frames[first + 2]);
  return envelope;
}

Status SendEnvelope(zmq::socket_t& socket, std::initializer_list<std::string_view> prefix,
                    std::string_view type, const Header& header, std::string_view body) {
  thread_local msgpack::sbuffer header_buffer(256);
  header_buffer.clear();
  EncodeTo(header_buffer, header);
  try {
    for (std::string_view part : prefix) {
      if (!socket.send(zmq::buffer(part), zmq::send_flags::sndmore | zmq::send_flags::dontwait)) {
        return Unavailable("send would block");
      }
    }
    // Once the first frame is queued, the rest of a multipart message always is.
    if (!socket.send(zmq::buffer(type), zmq::send_flags::sndmore | zmq::send_flags::dontwait)) {
      return Unavailable("send would block");
    }
    socket.send(zmq::const_buffer(header_buffer.data(), header_buffer.size()),
                zmq::send_flags::sndmore);
    socket.send(zmq::const_buffer(body.data(), body.size()), zmq::send_flags::none);
  } catch (const zmq::error_t& e) {
    // EHOSTUNREACH: a ROUTER_MANDATORY socket has no peer with that identity.
    return Unavailable(std::string("send failed: ") + e.what());
  }
  return Status::Ok();
}

std::string Printable(std::string_view bytes) {
  std::string out;
  for (unsigned char c : bytes.substr(0, 64)) {
    if (std::isprint(c)) {
      out += static_cast<char>(c);
    } else {
      char hex[5];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    }
  }
  if (bytes.size() > 64) out += "...";
  return out;
}

}  // namespace det::bus
