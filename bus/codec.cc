#include "bus/codec.h"

namespace det::bus::codec_detail {
namespace {

// Limits that bound the memory a hostile message can make the decoder allocate, beyond the bytes
// of the message itself (which ZMQ_MAXMSGSIZE bounds).
constexpr size_t kMaxArray = 1 << 20;
constexpr size_t kMaxMap = 1 << 16;
constexpr size_t kMaxDepth = 32;

// Let strings and binaries point into the input instead of copying them into the zone.
bool ReferenceAll(msgpack::type::object_type, std::size_t, void*) { return true; }

}  // namespace

std::string_view TypeName(const msgpack::object& o) {
  switch (o.type) {
    case msgpack::type::NIL:
      return "nil";
    case msgpack::type::BOOLEAN:
      return "a boolean";
    case msgpack::type::POSITIVE_INTEGER:
      return "an unsigned integer";
    case msgpack::type::NEGATIVE_INTEGER:
      return "a negative integer";
    case msgpack::type::FLOAT32:
    case msgpack::type::FLOAT64:
      return "a float";
    case msgpack::type::STR:
      return "a string";
    case msgpack::type::BIN:
      return "binary data";
    case msgpack::type::ARRAY:
      return "a list";
    case msgpack::type::MAP:
      return "a mapping";
    case msgpack::type::EXT:
      return "an extension value";
  }
  return "an unknown type";
}

bool Mismatch(const msgpack::object& o, std::string_view what, std::string* error) {
  *error = "expected " + std::string(what) + ", got " + std::string(TypeName(o));
  return false;
}

const msgpack::object* FindKey(const msgpack::object_map& map, std::string_view name,
                               uint32_t* hint) {
  for (uint32_t n = 0; n < map.size; ++n) {
    const uint32_t i = (*hint + n) % map.size;
    const msgpack::object& key = map.ptr[i].key;
    if (key.type == msgpack::type::STR &&
        std::string_view(key.via.str.ptr, key.via.str.size) == name) {
      *hint = i + 1;
      return &map.ptr[i].val;
    }
  }
  return nullptr;
}

Result<msgpack::object> ParseMsgpack(std::string_view bytes) {
  thread_local msgpack::zone zone;
  // One parser context per thread, reset for each message. msgpack::unpack builds a new one per
  // call, whose stack is a heap allocation: twice per bus message (header and body). This is what
  // msgpack-c's own unpack_imp does, minus that construction.
  static const msgpack::unpack_limit kLimits(kMaxArray, kMaxMap, 0xffffffff, 0xffffffff, 0xffffffff,
                                             kMaxDepth);
  thread_local msgpack::v1::detail::context context(ReferenceAll, nullptr, kLimits);
  if (bytes.empty()) return InvalidArgument("empty message body");
  zone.clear();
  context.init();
  context.user().set_zone(zone);
  context.user().set_referenced(false);
  size_t offset = 0;
  int state = 0;
  try {
    state = context.execute(bytes.data(), bytes.size(), offset);
  } catch (const std::exception& e) {
    return InvalidArgument(std::string("malformed msgpack: ") + e.what());
  }
  if (state < 0) return InvalidArgument("malformed msgpack: parse error");
  if (state == 0) return InvalidArgument("truncated msgpack");
  if (offset != bytes.size()) {
    return InvalidArgument(std::to_string(bytes.size() - offset) +
                           " unexpected bytes after the msgpack value");
  }
  return context.data();
}

msgpack::sbuffer& ScratchBuffer() {
  thread_local msgpack::sbuffer buffer(512);
  buffer.clear();
  return buffer;
}

}  // namespace det::bus::codec_detail
