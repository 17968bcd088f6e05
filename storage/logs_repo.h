#pragma once

// A task's log lines as IngestWriter stores them (chunks of lines): paged reads, the chunks
// themselves for a client that decodes them, where a tail starts; and Determined's log retention.
//
// Functions take the caller's transaction (Database::Run). Times are Unix nanoseconds.

#include <cstdint>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "common/status.h"
#include "storage/ingest_writer.h"
#include "storage/log_chunk.h"

namespace det::storage {

// A line as read back: its task and allocation are not filled in (the reader named the task).
struct StoredLogLine {
  int64_t id = 0;  // increases in the order lines were stored: the next page's cursor
  LogLine line;
};

// The first `limit` lines the query selects, oldest first, and no more once their text reaches
// kMaxLogPageBytes (at least one line). Reads chunk by chunk: memory is bounded by the page and a
// chunk, whatever the log's size. A chunk that cannot be decoded is an error naming it.
inline constexpr size_t kMaxLogPageBytes = 4 << 20;
Result<std::vector<StoredLogLine>> ReadTaskLogs(pqxx::work& tx, const std::string& task_id,
                                                const LogQuery& query, int limit);

// A stored chunk as it is, for a client that decodes it itself (det: DecodeLogChunk, then
// LogQuery::Selects per line).
struct StoredLogChunk {
  int64_t id = 0;
  std::string agent_id;
  ChunkCodec codec = ChunkCodec::kDeflate;
  std::string data;
  int64_t line_count = 0;
};

// The chunks that hold the first lines the query selects, oldest first, until they hold at least
// `min_lines` lines or kMaxLogPageBytes of stored bytes (at least one chunk). A chunk may also hold
// lines the query does not select; none holds only lines at or before after_id.
Result<std::vector<StoredLogChunk>> ReadTaskLogChunks(pqxx::work& tx, const std::string& task_id,
                                                      const LogQuery& query, int64_t min_lines);

// Where the last `count` lines the query selects start: the after_id that reads them, and how
// many there are (fewer than `count` when the log is shorter). Counts stored line counts, and
// decodes only chunks a time range cuts.
struct TailStart {
  int64_t after_id = 0;
  int64_t lines = 0;
};
Result<TailStart> TaskLogTailStart(pqxx::work& tx, const std::string& task_id,
                                   const LogQuery& query, int64_t count);

// Determined's log retention: removes the logs of every task that ended at least `days` days
// before `now_ns` (a trial's experiment may set its own days; -1 keeps them forever); how many
// lines went.
int64_t DeleteExpiredLogs(pqxx::work& tx, int default_days, int64_t now_ns);

}  // namespace det::storage
