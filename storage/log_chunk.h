#pragma once

// The stored form of task log lines: chunks of up to kMaxChunkLines lines of one task, agent and
// allocation (one ingest batch, usually), compressed together. A chunk row (table task_log_chunks)
// carries what reads and de-duplication select on: the task, its time range, its line count and,
// per stream, the first and last source offset.
//
// Encoding (codec 1, deflated): the first line's Unix nanoseconds as a zigzag varint, then per line
// a varint of flags (bit 0 stderr; bit 1 has a source offset; bits 2-4 the level: 0 INFO, 1 ERROR,
// 2 WARNING, 3 DEBUG, 4 CRITICAL, 5 TRACE, 7 named after the text), the zigzag varint of the
// timestamp's change from the line before, the zigzag varint of the offset's distance from where
// the stream's previous line ended (when it has one), the level's name (length varint and bytes,
// level 7 only), and the text (length varint and bytes). Codec 0 is a JSON array of
// [ns, level, stdtype, text, offset or null] (rows moved over from the old one-row-per-line table).

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "storage/log_line.h"

namespace det::storage {

inline constexpr size_t kMaxChunkLines = 4096;
// A line's id is its chunk's id times kChunkIdScale plus its index in the chunk: ids grow in the
// order lines were stored, and a chunk id and index are found from one.
inline constexpr int64_t kChunkIdScale = 65536;

enum class ChunkCodec : int16_t { kJson = 0, kDeflate = 1 };

// Which of a task's lines a read returns; the master applies it to the chunks it decodes, and det
// to those it is sent whole.
struct LogQuery {
  int64_t after_id = 0;             // lines with id > after_id
  std::optional<int64_t> since_ns;  // lines stamped at or after this time
  std::optional<int64_t> until_ns;  // lines stamped before this time

  bool Selects(int64_t id, int64_t timestamp_ns) const {
    return id > after_id && (!since_ns || timestamp_ns >= *since_ns) &&
           (!until_ns || timestamp_ns < *until_ns);
  }
};

// The id of the line at `index` in chunk `chunk_id`.
inline int64_t LogLineId(int64_t chunk_id, size_t index) {
  return chunk_id * kChunkIdScale + static_cast<int64_t>(index);
}

// The compressed form of `lines` (their task, agent and allocation are the chunk's, not encoded).
std::string EncodeLogChunk(std::span<const LogLine> lines);

// A chunk's lines: timestamp, level, stdtype, text and source offset filled in.
Result<std::vector<LogLine>> DecodeLogChunk(ChunkCodec codec, std::string_view data);

}  // namespace det::storage
