#pragma once

// The msgpack codec for bus messages.
//
// A message is a plain struct that lists its fields once, in a static `Fields` function; that list
// is the only place a wire name is spelled:
//
//   struct Heartbeat {
//     static constexpr std::string_view kType = "channel.heartbeat";
//     std::string agent_id;
//     uint64_t running = 0;
//     template <class Self, class V> static void Fields(Self& s, V& v) {
//       v("agent_id", s.agent_id, kRequired);
//       v("running", s.running);
//     }
//   };
//
// Encoded, a message is a msgpack map from field name to value, so a newer sender can add fields
// (an older receiver ignores keys it does not know) and an older sender can omit them (a missing
// optional field keeps its default). An empty std::optional is left out of the map.
//
// Decode never throws and never crashes on hostile bytes: truncated input, garbage, wrong value
// types, out-of-range integers and oversized containers all come back as InvalidArgument naming the
// field ("agent.register: field slots[1].id: expected a string, got an unsigned integer").

#include <cstdint>
#include <limits>
#include <map>
#include <msgpack.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "common/status.h"

namespace det::bus {

// Opaque binary data (msgpack `bin`), e.g. an embedded encoded message or a file.
struct Bytes {
  std::string data;
  bool operator==(const Bytes&) const = default;
};

// kOmitDefault: optional, and left out of the encoding while it equals its type's default value
// (saves bytes on hot messages whose optional fields are usually empty).
enum class Presence { kOptional, kRequired, kOmitDefault };
inline constexpr Presence kRequired = Presence::kRequired;
inline constexpr Presence kOmitDefault = Presence::kOmitDefault;

namespace codec_detail {

using Packer = msgpack::packer<msgpack::sbuffer>;

// Probes whether a type lists its fields.
struct FieldProbe {
  template <class T>
  void operator()(std::string_view, T&, Presence = Presence::kOptional) {}
};

}  // namespace codec_detail

template <class T>
concept FieldStruct = requires(T& t, codec_detail::FieldProbe& probe) {
  T::Fields(t, probe);
};

template <class T>
concept Message = FieldStruct<T> && requires {
  std::string_view(T::kType);
};

namespace codec_detail {

std::string_view TypeName(const msgpack::object& o);
// Appends "expected <what>, got <actual type>" to *error and returns false.
bool Mismatch(const msgpack::object& o, std::string_view what, std::string* error);

template <class T>
struct ValueCodec;  // Defined below for every supported field type.

template <>
struct ValueCodec<bool> {
  static void Pack(Packer& p, bool v) { v ? p.pack_true() : p.pack_false(); }
  static bool Unpack(const msgpack::object& o, bool* out, std::string* error) {
    if (o.type != msgpack::type::BOOLEAN) return Mismatch(o, "a boolean", error);
    *out = o.via.boolean;
    return true;
  }
};

template <class T>
requires(std::is_integral_v<T> && !std::is_same_v<T, bool>) struct ValueCodec<T> {
  static void Pack(Packer& p, T v) { p.pack(v); }
  static bool Unpack(const msgpack::object& o, T* out, std::string* error) {
    if (o.type == msgpack::type::POSITIVE_INTEGER) {
      if (o.via.u64 > static_cast<uint64_t>(std::numeric_limits<T>::max())) {
        *error = "integer " + std::to_string(o.via.u64) + " is out of range";
        return false;
      }
      *out = static_cast<T>(o.via.u64);
      return true;
    }
    if (o.type == msgpack::type::NEGATIVE_INTEGER) {
      if constexpr (std::is_signed_v<T>) {
        if (o.via.i64 >= static_cast<int64_t>(std::numeric_limits<T>::min())) {
          *out = static_cast<T>(o.via.i64);
          return true;
        }
      }
      *error = "integer " + std::to_string(o.via.i64) + " is out of range";
      return false;
    }
    return Mismatch(o, std::is_signed_v<T> ? "an integer" : "an unsigned integer", error);
  }
};

template <>
struct ValueCodec<double> {
  static void Pack(Packer& p, double v) { p.pack_double(v); }
  static bool Unpack(const msgpack::object& o, double* out, std::string* error) {
    switch (o.type) {
      case msgpack::type::FLOAT32:
      case msgpack::type::FLOAT64:
        *out = o.via.f64;
        return true;
      case msgpack::type::POSITIVE_INTEGER:
        *out = static_cast<double>(o.via.u64);
        return true;
      case msgpack::type::NEGATIVE_INTEGER:
        *out = static_cast<double>(o.via.i64);
        return true;
      default:
        return Mismatch(o, "a number", error);
    }
  }
};

template <>
struct ValueCodec<std::string> {
  static void Pack(Packer& p, const std::string& v) {
    p.pack_str(static_cast<uint32_t>(v.size()));
    p.pack_str_body(v.data(), static_cast<uint32_t>(v.size()));
  }
  static bool Unpack(const msgpack::object& o, std::string* out, std::string* error) {
    if (o.type != msgpack::type::STR) return Mismatch(o, "a string", error);
    out->assign(o.via.str.ptr, o.via.str.size);
    return true;
  }
};

template <>
struct ValueCodec<Bytes> {
  static void Pack(Packer& p, const Bytes& v) {
    p.pack_bin(static_cast<uint32_t>(v.data.size()));
    p.pack_bin_body(v.data.data(), static_cast<uint32_t>(v.data.size()));
  }
  static bool Unpack(const msgpack::object& o, Bytes* out, std::string* error) {
    if (o.type == msgpack::type::BIN) {
      out->data.assign(o.via.bin.ptr, o.via.bin.size);
    } else if (o.type == msgpack::type::STR) {  // lenient: some encoders write bytes as str
      out->data.assign(o.via.str.ptr, o.via.str.size);
    } else {
      return Mismatch(o, "binary data", error);
    }
    return true;
  }
};

template <class T>
struct ValueCodec<std::vector<T>> {
  static void Pack(Packer& p, const std::vector<T>& v) {
    p.pack_array(static_cast<uint32_t>(v.size()));
    for (const auto& item : v) ValueCodec<T>::Pack(p, item);
  }
  static bool Unpack(const msgpack::object& o, std::vector<T>* out, std::string* error) {
    if (o.type != msgpack::type::ARRAY) return Mismatch(o, "a list", error);
    out->clear();
    out->resize(o.via.array.size);
    for (uint32_t i = 0; i < o.via.array.size; ++i) {
      if (!ValueCodec<T>::Unpack(o.via.array.ptr[i], &(*out)[i], error)) {
        const bool path_continues = error->starts_with("[") || error->starts_with(".");
        *error = "[" + std::to_string(i) + "]" + (path_continues ? "" : ": ") + *error;
        return false;
      }
    }
    return true;
  }
};

template <class T>
struct ValueCodec<std::map<std::string, T>> {
  static void Pack(Packer& p, const std::map<std::string, T>& v) {
    p.pack_map(static_cast<uint32_t>(v.size()));
    for (const auto& [key, value] : v) {
      ValueCodec<std::string>::Pack(p, key);
      ValueCodec<T>::Pack(p, value);
    }
  }
  static bool Unpack(const msgpack::object& o, std::map<std::string, T>* out, std::string* error) {
    if (o.type != msgpack::type::MAP) return Mismatch(o, "a mapping", error);
    out->clear();
    for (uint32_t i = 0; i < o.via.map.size; ++i) {
      const auto& kv = o.via.map.ptr[i];
      std::string key;
      if (!ValueCodec<std::string>::Unpack(kv.key, &key, error)) {
        *error = "key: " + *error;
        return false;
      }
      if (!ValueCodec<T>::Unpack(kv.val, &(*out)[key], error)) {
        const bool path_continues = error->starts_with("[") || error->starts_with(".");
        *error = "[\"" + key + "\"]" + (path_continues ? "" : ": ") + *error;
        return false;
      }
    }
    return true;
  }
};

template <class T>
struct ValueCodec<std::optional<T>> {
  static void Pack(Packer& p, const std::optional<T>& v) {
    if (v) {
      ValueCodec<T>::Pack(p, *v);
    } else {
      p.pack_nil();
    }
  }
  static bool Unpack(const msgpack::object& o, std::optional<T>* out, std::string* error) {
    if (o.type == msgpack::type::NIL) {
      out->reset();
      return true;
    }
    T value{};
    if (!ValueCodec<T>::Unpack(o, &value, error)) return false;
    *out = std::move(value);
    return true;
  }
};

template <class T>
inline constexpr bool kIsOptional = false;
template <class T>
inline constexpr bool kIsOptional<std::optional<T>> = true;

// Counts the map entries a struct will encode to (empty optionals are left out).
template <class T>
bool Omitted(const T& field, Presence presence) {
  if constexpr (kIsOptional<T>) {
    if (!field) return true;
  }
  if constexpr (std::equality_comparable<T> && std::default_initializable<T>) {
    if (presence == Presence::kOmitDefault && field == T{}) return true;
  }
  return false;
}

struct FieldCounter {
  uint32_t count = 0;
  template <class T>
  void operator()(std::string_view, const T& field, Presence presence = Presence::kOptional) {
    if (!Omitted(field, presence)) ++count;
  }
};

struct FieldPacker {
  Packer& packer;
  template <class T>
  void operator()(std::string_view name, const T& field, Presence presence = Presence::kOptional) {
    if (Omitted(field, presence)) return;
    packer.pack_str(static_cast<uint32_t>(name.size()));
    packer.pack_str_body(name.data(), static_cast<uint32_t>(name.size()));
    ValueCodec<std::remove_cv_t<T>>::Pack(packer, field);
  }
};

// Finds `name` among the map's keys, starting at *hint (encoders write fields in the order
// decoders ask for them, so this is usually the first key tried) and updating it.
const msgpack::object* FindKey(const msgpack::object_map& map, std::string_view name,
                               uint32_t* hint);

// Reads fields out of a decoded map; stops at the first error.
struct FieldUnpacker {
  const msgpack::object_map& map;
  std::string error;
  uint32_t hint = 0;
  template <class T>
  void operator()(std::string_view name, T& field, Presence presence = Presence::kOptional) {
    if (!error.empty()) return;
    const msgpack::object* value = FindKey(map, name, &hint);
    if (value == nullptr) {
      if (presence == Presence::kRequired) error = std::string(name) + ": required but missing";
      return;
    }
    std::string why;
    if (!ValueCodec<T>::Unpack(*value, &field, &why)) {
      const bool path_continues = why.starts_with("[") || why.starts_with(".");
      error = std::string(name) + (path_continues ? "" : ": ") + why;
    }
  }
};

template <FieldStruct T>
void PackStruct(Packer& p, const T& value) {
  FieldCounter counter;
  T::Fields(value, counter);
  p.pack_map(counter.count);
  FieldPacker packer{p};
  T::Fields(value, packer);
}

template <FieldStruct T>
bool UnpackStruct(const msgpack::object& o, T* out, std::string* error) {
  if (o.type != msgpack::type::MAP) return Mismatch(o, "a mapping of fields", error);
  FieldUnpacker unpacker{o.via.map, {}, 0};
  T::Fields(*out, unpacker);
  if (!unpacker.error.empty()) {
    *error = std::move(unpacker.error);
    return false;
  }
  return true;
}

// Nested structs are encoded as maps too.
template <FieldStruct T>
struct ValueCodec<T> {
  static void Pack(Packer& p, const T& v) { PackStruct(p, v); }
  static bool Unpack(const msgpack::object& o, T* out, std::string* error) {
    if (!UnpackStruct(o, out, error)) {
      if (!error->starts_with("expected")) *error = "." + *error;
      return false;
    }
    return true;
  }
};

// Parses msgpack bytes into an object tree held by a per-thread zone that is reused by the next
// call on the same thread: the returned object is valid until then. Strings and binaries point into
// `bytes`, which must outlive the object. Errors: malformed or truncated input, trailing bytes,
// containers or nesting beyond the bus's limits.
Result<msgpack::object> ParseMsgpack(std::string_view bytes);

// A per-thread scratch buffer for encoding, cleared on each call.
msgpack::sbuffer& ScratchBuffer();

}  // namespace codec_detail

// Appends the msgpack encoding of `value` to `buffer`.
template <FieldStruct T>
void EncodeTo(msgpack::sbuffer& buffer, const T& value) {
  codec_detail::Packer packer(buffer);
  codec_detail::PackStruct(packer, value);
}

template <FieldStruct T>
std::string Encode(const T& value) {
  msgpack::sbuffer& buffer = codec_detail::ScratchBuffer();
  EncodeTo(buffer, value);
  return std::string(buffer.data(), buffer.size());
}

// Decodes into *out (whose defaults stand for missing optional fields). `what` prefixes errors.
template <FieldStruct T>
Status DecodeInto(std::string_view bytes, T* out, std::string_view what) {
  auto parsed = codec_detail::ParseMsgpack(bytes);
  if (!parsed.ok()) return parsed.status().WithContext(what);
  if (parsed->type != msgpack::type::MAP) {
    return InvalidArgument(std::string(what) + ": expected a mapping of fields, got " +
                           std::string(codec_detail::TypeName(*parsed)));
  }
  std::string error;
  if (!codec_detail::UnpackStruct(*parsed, out, &error)) {
    return InvalidArgument(std::string(what) + ": field " + error);
  }
  return Status::Ok();
}

template <FieldStruct T>
Result<T> Decode(std::string_view bytes) {
  T value{};
  std::string_view what = "message";
  if constexpr (Message<T>) what = T::kType;
  DET_RETURN_IF_ERROR(DecodeInto(bytes, &value, what));
  return value;
}

}  // namespace det::bus
