#pragma once

// A task's log line as the ingest writer stores it and the chunk codec (log_chunk.h) encodes it:
// apart from the rest of storage, so that a client that decodes chunks (det) needs neither libpqxx
// nor the repositories.

#include <cstdint>
#include <optional>
#include <string>

namespace det::storage {

struct LogLine {
  std::string task_id;
  std::string agent_id;
  int64_t timestamp_ns = 0;  // Unix time
  std::string level = "INFO";
  std::string stdtype = "stdout";
  std::string log;
  // Where the line came from, when known: a line with the same allocation, stdtype and offset
  // is stored once however often it is written.
  std::optional<std::string> allocation_id;
  std::optional<int64_t> source_offset;
};

}  // namespace det::storage
