#include "storage/log_chunk.h"

#include <zlib.h>

#include <array>
#include <nlohmann/json.hpp>

namespace det::storage {
namespace {

constexpr std::array<std::string_view, 6> kLevels = {"INFO",  "ERROR",    "WARNING",
                                                     "DEBUG", "CRITICAL", "TRACE"};
constexpr uint64_t kNamedLevel = 7;
constexpr uint64_t kStderr = 1, kHasOffset = 2;
constexpr int kDeflateLevel = 3;  // most of level 9's ratio on log text at several times the speed

void PutVarint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

void PutSigned(std::string& out, int64_t v) {
  PutVarint(out, (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63));
}

void PutBytes(std::string& out, std::string_view bytes) {
  PutVarint(out, bytes.size());
  out.append(bytes);
}

uint64_t LevelCode(std::string_view level) {
  for (size_t i = 0; i < kLevels.size(); ++i) {
    if (kLevels[i] == level) return i;
  }
  return kNamedLevel;
}

// Reads the encoding front to back; every read fails cleanly past the end.
class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}
  bool done() const { return at_ == data_.size(); }
  std::optional<uint64_t> Varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64 && at_ < data_.size(); shift += 7) {
      const auto byte = static_cast<uint8_t>(data_[at_++]);
      v |= static_cast<uint64_t>(byte & 0x7F) << shift;
      if (!(byte & 0x80)) return v;
    }
    return std::nullopt;
  }
  std::optional<int64_t> Signed() {
    auto v = Varint();
    if (!v) return std::nullopt;
    return static_cast<int64_t>((*v >> 1) ^ (~(*v & 1) + 1));
  }
  std::optional<std::string> Bytes() {
    auto size = Varint();
    if (!size || *size > data_.size() - at_) return std::nullopt;
    std::string bytes(data_.substr(at_, *size));
    at_ += *size;
    return bytes;
  }

 private:
  std::string_view data_;
  size_t at_ = 0;
};

Result<std::string> Inflate(std::string_view data) {
  z_stream z{};
  if (inflateInit(&z) != Z_OK) return Internal("log chunk: inflateInit failed");
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  std::string out;
  char buf[65536];
  int rc = Z_OK;
  while (rc == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof buf;
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(buf, sizeof buf - z.avail_out);
    if (rc == Z_BUF_ERROR && z.avail_in == 0) break;
  }
  inflateEnd(&z);
  if (rc != Z_STREAM_END) return Internal("log chunk: its compressed data is damaged");
  return out;
}

Result<std::vector<LogLine>> DecodeDeflated(std::string_view data) {
  DET_ASSIGN_OR_RETURN(std::string raw, Inflate(data));
  Reader in(raw);
  auto first = in.Signed();
  if (!first) return Internal("log chunk: no first timestamp");
  int64_t timestamp = *first;
  int64_t next_offset[2] = {0, 0};  // where the stream's previous line ended
  std::vector<LogLine> lines;
  while (!in.done()) {
    auto flags = in.Varint();
    auto delta = in.Signed();
    if (!flags || !delta) return Internal("log chunk: a line is cut short");
    LogLine& line = lines.emplace_back();
    const int stream = (*flags & kStderr) ? 1 : 0;
    line.stdtype = stream ? "stderr" : "stdout";
    timestamp += *delta;
    line.timestamp_ns = timestamp;
    if (*flags & kHasOffset) {
      auto distance = in.Signed();
      if (!distance) return Internal("log chunk: a line's offset is cut short");
      line.source_offset = next_offset[stream] + *distance;
    }
    const uint64_t level = (*flags >> 2) & 7;
    if (level == kNamedLevel) {
      auto name = in.Bytes();
      if (!name) return Internal("log chunk: a line's level is cut short");
      line.level = std::move(*name);
    } else if (level < kLevels.size()) {
      line.level = kLevels[level];
    } else {
      return Internal("log chunk: unknown level code " + std::to_string(level));
    }
    auto text = in.Bytes();
    if (!text) return Internal("log chunk: a line's text is cut short");
    line.log = std::move(*text);
    if (line.source_offset) {
      next_offset[stream] = *line.source_offset + static_cast<int64_t>(line.log.size()) + 1;
    }
  }
  return lines;
}

Result<std::vector<LogLine>> DecodeJson(std::string_view data) {
  auto array = nlohmann::json::parse(data, nullptr, false);
  if (!array.is_array()) return Internal("log chunk: its JSON is not an array");
  std::vector<LogLine> lines;
  for (const auto& entry : array) {
    if (!entry.is_array() || entry.size() != 5 || !entry[0].is_number_integer() ||
        !entry[1].is_string() || !entry[2].is_string() || !entry[3].is_string()) {
      return Internal("log chunk: a JSON line is not [ns, level, stdtype, text, offset]");
    }
    LogLine& line = lines.emplace_back();
    line.timestamp_ns = entry[0].get<int64_t>();
    line.level = entry[1].get<std::string>();
    line.stdtype = entry[2].get<std::string>();
    line.log = entry[3].get<std::string>();
    if (entry[4].is_number_integer()) line.source_offset = entry[4].get<int64_t>();
  }
  return lines;
}

}  // namespace

std::string EncodeLogChunk(std::span<const LogLine> lines) {
  std::string raw;
  int64_t timestamp = lines.empty() ? 0 : lines.front().timestamp_ns;
  PutSigned(raw, timestamp);
  int64_t next_offset[2] = {0, 0};
  for (const LogLine& line : lines) {
    const int stream = line.stdtype == "stderr" ? 1 : 0;
    const uint64_t level = LevelCode(line.level);
    PutVarint(raw, (stream ? kStderr : 0) | (line.source_offset ? kHasOffset : 0) | (level << 2));
    PutSigned(raw, line.timestamp_ns - timestamp);
    timestamp = line.timestamp_ns;
    if (line.source_offset) {
      PutSigned(raw, *line.source_offset - next_offset[stream]);
      next_offset[stream] = *line.source_offset + static_cast<int64_t>(line.log.size()) + 1;
    }
    if (level == kNamedLevel) PutBytes(raw, line.level);
    PutBytes(raw, line.log);
  }
  uLongf size = compressBound(static_cast<uLong>(raw.size()));
  std::string packed(size, '\0');
  compress2(reinterpret_cast<Bytef*>(packed.data()), &size,
            reinterpret_cast<const Bytef*>(raw.data()), static_cast<uLong>(raw.size()),
            kDeflateLevel);
  packed.resize(size);
  return packed;
}

Result<std::vector<LogLine>> DecodeLogChunk(ChunkCodec codec, std::string_view data) {
  switch (codec) {
    case ChunkCodec::kDeflate:
      return DecodeDeflated(data);
    case ChunkCodec::kJson:
      return DecodeJson(data);
  }
  return Internal("log chunk: unknown codec " + std::to_string(static_cast<int>(codec)));
}

}  // namespace det::storage
