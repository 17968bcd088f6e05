#pragma once

// The envelope every bus message travels in: three frames [type][header][body].
//
// - type: a stable dotted name such as "agent.heartbeat", spelled once in bus/catalog/.
// - header: msgpack map (Header below): protocol version, sender, sender epoch, sequence number,
//   send time, and for events an optional key (the last-value-cache slot the event updates).
// - body: the message's msgpack map (bus/codec.h).
//
// ROUTER sockets add an identity frame in front, REQ/REP an empty delimiter; the envelope is the
// same on every transport (tcp://, ipc://, inproc://).

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>
#include <zmq.hpp>

#include "bus/codec.h"
#include "common/status.h"

namespace det::bus {

// Bumped only for incompatible changes; additive changes go in new optional fields.
inline constexpr uint32_t kProtocolVersion = 1;
inline constexpr size_t kMaxTypeLength = 64;

struct Header {
  uint32_t version = kProtocolVersion;
  std::string sender;      // component or agent id
  uint64_t epoch = 0;      // the sender's incarnation: random per process start
  uint64_t seq = 0;        // sender's sequence number; meaning depends on the pattern (see each)
  int64_t sent_at = 0;     // Unix time in nanoseconds, from the sender's Clock
  std::string key;         // events: the state slot this event sets (empty: not retained)
  bool tombstone = false;  // events: this event removes `key` from the retained state

  bool operator==(const Header&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("version", s.version, kRequired);
    v("sender", s.sender);
    v("epoch", s.epoch);
    v("seq", s.seq);
    v("sent_at", s.sent_at);
    v("key", s.key, kOmitDefault);
    v("tombstone", s.tombstone, kOmitDefault);
  }
};

// A received message. Owns its body frame; decode the body with Decode<M>().
struct Envelope {
  std::string type;
  Header header;
  zmq::message_t body;

  std::string_view body_bytes() const { return {body.data<char>(), body.size()}; }
  bool is(std::string_view t) const { return type == t; }

  // Decodes the body as M. InvalidArgument if the type does not match or the body is malformed.
  template <Message M>
  Result<M> Decode() const {
    if (type != M::kType) {
      return InvalidArgument("expected a " + std::string(M::kType) + " message, got " + type);
    }
    return bus::Decode<M>(body_bytes());
  }
};

// Reads one whole multipart message if one is waiting (never blocks). Returns false if none was
// waiting. Frames beyond kMaxFrames are read and discarded, and the message is reported with
// kMaxFrames + 1 frames so that callers reject it.
inline constexpr size_t kMaxFrames = 8;
bool ReceiveFrames(zmq::socket_t& socket, std::vector<zmq::message_t>* frames);

// Parses frames[first..] as an envelope, taking ownership of the body frame. Errors name what is
// wrong: the part count, an empty or overlong type, a malformed header or an unsupported version.
Result<Envelope> ParseEnvelope(std::vector<zmq::message_t>& frames, size_t first);

// Sends [prefix...][type][header][body] without blocking. `prefix` holds routing frames (a ROUTER
// identity, a REQ/REP empty delimiter). Returns Unavailable if the message could not be queued
// (high-water mark reached, or a ROUTER peer that is not connected).
Status SendEnvelope(zmq::socket_t& socket, std::initializer_list<std::string_view> prefix,
                    std::string_view type, const Header& header, std::string_view body);

template <Message M>
Status Send(zmq::socket_t& socket, std::initializer_list<std::string_view> prefix,
            const Header& header, const M& message) {
  msgpack::sbuffer& buffer = codec_detail::ScratchBuffer();
  EncodeTo(buffer, message);
  return SendEnvelope(socket, prefix, M::kType, header,
                      std::string_view(buffer.data(), buffer.size()));
}

// A printable, bounded rendering of an untrusted identity or sender for logs.
std::string Printable(std::string_view bytes);

}  // namespace det::bus
