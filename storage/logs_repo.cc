#include "storage/logs_repo.h"

#include <algorithm>
#include <limits>

#include "storage/sql_support.h"

namespace det::storage {

namespace {

// Chunks of a task per query, in id order (`newest_first`: descending) from `from_chunk`
// (inclusive); at most `count`.
pqxx::result SelectChunks(pqxx::work& tx, const std::string& task_id, const LogQuery& query,
                          int64_t from_chunk, bool newest_first, int count) {
  const std::string sql = std::string(
                              "SELECT id, agent_id, codec, data, line_count FROM task_log_chunks"
                              " WHERE task_id = $1 AND id ") +
                          (newest_first ? "<= $2" : ">= $2") +
                          " AND ($3::bigint IS NULL OR last_ts >= det_ts($3))"
                          " AND ($4::bigint IS NULL OR first_ts < det_ts($4 + 999))"
                          " ORDER BY id " +
                          (newest_first ? "DESC" : "ASC") + " LIMIT $5";
  return tx.exec_params(sql, task_id, from_chunk, query.since_ns, query.until_ns, count);
}

// The lines of one chunk row that the query selects, in order.
Result<std::vector<StoredLogLine>> ChunkLines(const pqxx::row& row, const std::string& task_id,
                                              const LogQuery& query) {
  const int64_t chunk_id = row[0].as<int64_t>();
  auto data = BytesColumn(row[3]);
  auto decoded = DecodeLogChunk(static_cast<ChunkCodec>(row[2].as<int>()), data.value_or(""));
  if (!decoded.ok()) {
    return Internal("task " + task_id + ", log chunk " + std::to_string(chunk_id) + ": " +
                    decoded.status().message());
  }
  std::vector<StoredLogLine> lines;
  lines.reserve(decoded->size());
  const std::string agent_id = row[1].as<std::string>();
  for (size_t i = 0; i < decoded->size(); ++i) {
    LogLine& line = (*decoded)[i];
    const int64_t id = LogLineId(chunk_id, i);
    if (!query.Selects(id, line.timestamp_ns)) continue;
    line.agent_id = agent_id;
    lines.push_back({id, std::move(line)});
  }
  return lines;
}

// Chunks are read a few at a time: enough for a page of short lines in one round trip.
constexpr int kChunksPerRead = 8;

}  // namespace

Result<std::vector<StoredLogLine>> ReadTaskLogs(pqxx::work& tx, const std::string& task_id,
                                                const LogQuery& query, int limit) {
  std::vector<StoredLogLine> lines;
  size_t bytes = 0;
  int64_t from_chunk = std::max<int64_t>(query.after_id, 0) / kChunkIdScale;
  while (static_cast<int>(lines.size()) < limit) {
    const pqxx::result rows = SelectChunks(tx, task_id, query, from_chunk, false, kChunksPerRead);
    for (const auto& row : rows) {
      DET_ASSIGN_OR_RETURN(std::vector<StoredLogLine> chunk, ChunkLines(row, task_id, query));
      for (auto& line : chunk) {
        if (static_cast<int>(lines.size()) == limit || bytes >= kMaxLogPageBytes) return lines;
        bytes += line.line.log.size();
        lines.push_back(std::move(line));
      }
      from_chunk = row[0].as<int64_t>() + 1;
    }
    if (rows.size() < static_cast<size_t>(kChunksPerRead)) break;
  }
  return lines;
}

Result<std::vector<StoredLogChunk>> ReadTaskLogChunks(pqxx::work& tx, const std::string& task_id,
                                                      const LogQuery& query, int64_t min_lines) {
  std::vector<StoredLogChunk> chunks;
  int64_t lines = 0;
  size_t bytes = 0;
  int64_t from_chunk = std::max<int64_t>(query.after_id, 0) / kChunkIdScale;
  while (lines < min_lines && bytes < kMaxLogPageBytes) {
    const pqxx::result rows = SelectChunks(tx, task_id, query, from_chunk, false, kChunksPerRead);
    for (const auto& row : rows) {
      from_chunk = row[0].as<int64_t>() + 1;
      StoredLogChunk chunk{row[0].as<int64_t>(), row[1].as<std::string>(),
                           static_cast<ChunkCodec>(row[2].as<int>()),
                           BytesColumn(row[3]).value_or(""), row[4].as<int64_t>()};
      if (LogLineId(chunk.id, static_cast<size_t>(chunk.line_count)) - 1 <= query.after_id) {
        continue;  // read to its end already
      }
      lines += chunk.line_count;
      bytes += chunk.data.size();
      chunks.push_back(std::move(chunk));
      if (lines >= min_lines || bytes >= kMaxLogPageBytes) return chunks;
    }
    if (rows.size() < static_cast<size_t>(kChunksPerRead)) break;
  }
  return chunks;
}

Result<TailStart> TaskLogTailStart(pqxx::work& tx, const std::string& task_id,
                                   const LogQuery& query, int64_t count) {
  TailStart start{std::max<int64_t>(query.after_id, 0), 0};
  const bool by_time = query.since_ns || query.until_ns;
  int64_t to_chunk = std::numeric_limits<int64_t>::max();
  while (start.lines < count) {
    const pqxx::result rows = SelectChunks(tx, task_id, query, to_chunk, true, kChunksPerRead);
    for (const auto& row : rows) {
      const int64_t chunk_id = row[0].as<int64_t>();
      to_chunk = chunk_id - 1;
      // The ids of the chunk's selected lines, oldest first.
      std::vector<int64_t> ids;
      if (by_time || chunk_id * kChunkIdScale <= query.after_id) {
        DET_ASSIGN_OR_RETURN(std::vector<StoredLogLine> lines, ChunkLines(row, task_id, query));
        for (const auto& line : lines) ids.push_back(line.id);
      } else {
        const int64_t line_count = row[4].as<int64_t>();
        for (int64_t i = 0; i < line_count; ++i) ids.push_back(chunk_id * kChunkIdScale + i);
      }
      const int64_t wanted = count - start.lines;
      if (static_cast<int64_t>(ids.size()) >= wanted) {
        start.lines = count;
        start.after_id = ids[ids.size() - wanted] - 1;
        return start;
      }
      start.lines += static_cast<int64_t>(ids.size());
      if (!ids.empty()) start.after_id = ids.front() - 1;
    }
    if (rows.size() < static_cast<size_t>(kChunksPerRead)) break;
  }
  return start;
}

int64_t DeleteExpiredLogs(pqxx::work& tx, int default_days, int64_t now_ns) {
  return tx
      .exec_params1(
          "WITH expired AS ("
          "  SELECT t.id FROM tasks t"
          "  LEFT JOIN trials tr ON tr.id = t.trial_id"
          "  LEFT JOIN experiments e ON e.id = tr.experiment_id"
          "  WHERE t.end_time IS NOT NULL AND coalesce(e.log_retention_days, $1) >= 0"
          "    AND t.end_time <= det_ts($2) - make_interval(days => coalesce(e.log_retention_days,"
          "                                                                  $1))),"
          " gone AS (DELETE FROM task_log_chunks WHERE task_id IN (SELECT id FROM expired)"
          "  RETURNING line_count)"
          " SELECT coalesce(sum(line_count), 0)::bigint FROM gone",
          default_days, now_ns)[0]
      .as<int64_t>();
}

}  // namespace det::storage
