#include "cli/log_commands.h"

#include <algorithm>
#include <iostream>

#include "bus/catalog/cluster_json.h"
#include "bus/catalog/tasks.h"
#include "cli/output.h"
#include "common/clock.h"
#include "common/config.h"
#include "storage/log_chunk.h"

namespace det::cli {
namespace {

constexpr int32_t kPageLines = 10000;  // the most a page holds

// `text` as Unix ns: an RFC 3339 time, or a duration before now ("90s", "15m", "2h").
Result<int64_t> TimeOf(const std::string& option, const std::string& text) {
  if (text.empty()) return int64_t{0};
  if (std::optional<int64_t> ns = ParseRfc3339Utc(text)) return *ns;
  Result<Duration> ago = ParseDuration(text);
  if (!ago.ok()) {
    return InvalidArgument(option + ": \"" + text +
                           "\" is neither an RFC 3339 time (2026-11-26T10:00:00Z) nor a duration "
                           "ago (15m, 2h)");
  }
  return UnixNanos(RealClock::Instance().WallNow()) -
         std::chrono::duration_cast<std::chrono::nanoseconds>(*ago).count();
}

}  // namespace

void AddLogSelectionOptions(CLI::App* command, const std::shared_ptr<LogSelection>& selection,
                            const std::string& follow_help) {
  command->add_flag("-f,--follow", selection->follow, follow_help);
  auto* head = command->add_option("--head", selection->head, "only the first N lines")
                   ->check(CLI::PositiveNumber);
  command->add_option("--tail", selection->tail, "only the last N lines (then follow with -f)")
      ->check(CLI::PositiveNumber)
      ->excludes(head);
  command->add_option("--since,--timestamp-after", selection->since,
                      "only lines from this time on: RFC 3339 (2026-11-26T10:00:00Z) or a "
                      "duration ago (15m)");
  command->add_option("--until,--timestamp-before", selection->until,
                      "only lines before this time (same forms)");
}

LogPrinter::LogPrinter(const CliOptions& options, LogSelection selection, bool skip_unknown)
    : options_(options), selection_(std::move(selection)), skip_unknown_(skip_unknown) {
  auto since = TimeOf("--since", selection_.since);
  auto until = TimeOf("--until", selection_.until);
  times_ = !since.ok() ? since.status() : until.status();
  if (since.ok()) since_ns_ = *since;
  if (until.ok()) until_ns_ = *until;
}

::det::Status LogPrinter::StartCursors(const std::vector<LogSource>& sources) {
  int64_t wanted = selection_.tail;
  for (auto source = sources.rbegin(); source != sources.rend(); ++source) {
    // Sources before the tail start at their end; the one it starts in, where it starts.
    bus::TaskLogsRequest request{source->task_id,         0,         1,
                                 wanted > 0 ? wanted : 1, since_ns_, until_ns_};
    auto reply = Call<bus::TaskLogsRequest, bus::TaskLogsReply>(options_, request);
    if (reply.status().code() == StatusCode::kNotFound && skip_unknown_) continue;
    if (!reply.ok()) return reply.status();
    if (wanted > 0) {
      after_[source->task_id] = reply->start_after_id;
      wanted -= reply->tail_lines;
    } else {
      after_[source->task_id] = reply->lines.empty() ? reply->start_after_id : reply->lines[0].id;
    }
  }
  return Status::Ok();
}

void LogPrinter::PrintLine(const LogSource& source, const bus::TaskLogLine& line) {
  if (options_.machine_readable()) {
    PrintReply(options_, bus::ToJson(line));
  } else {
    std::cout << source.prefix << "[" << Rfc3339Utc(line.timestamp, 6) << "] " << line.text << "\n";
  }
  ++printed_;
}

::det::Status LogPrinter::PrintChunk(const LogSource& source, const bus::TaskLogChunk& chunk,
                                     int64_t& after) {
  auto lines = storage::DecodeLogChunk(static_cast<storage::ChunkCodec>(chunk.codec), chunk.data);
  if (!lines.ok()) {
    return Internal("task " + source.task_id + ", log chunk " + std::to_string(chunk.id) + ": " +
                    lines.status().message());
  }
  storage::LogQuery query{after};
  if (since_ns_ > 0) query.since_ns = since_ns_;
  if (until_ns_ > 0) query.until_ns = until_ns_;
  for (size_t i = 0; i < lines->size(); ++i) {
    if (head_done()) return Status::Ok();
    storage::LogLine& line = (*lines)[i];
    const int64_t id = storage::LogLineId(chunk.id, i);
    if (!query.Selects(id, line.timestamp_ns)) continue;
    PrintLine(source, {id, line.timestamp_ns, chunk.agent_id, std::move(line.stdtype),
                       std::move(line.log)});
    after = id;
  }
  after = std::max(after, storage::LogLineId(chunk.id, lines->size()) - 1);
  return Status::Ok();
}

Result<bool> LogPrinter::PrintNew(const LogSource& source) {
  int64_t& after = after_[source.task_id];
  while (!head_done()) {
    // The stored chunks, decoded here: the master copies no line.
    bus::TaskLogsRequest request{source.task_id, after, kPageLines, 0, since_ns_, until_ns_};
    request.chunks = true;
    auto reply = Call<bus::TaskLogsRequest, bus::TaskLogsReply>(options_, request);
    if (!reply.ok()) return reply.status();
    for (const auto& line : reply->lines) {  // a master that sends lines (before chunks)
      if (head_done()) break;
      PrintLine(source, line);
      after = line.id;
    }
    for (const auto& chunk : reply->chunks) {
      if (head_done()) break;
      DET_RETURN_IF_ERROR(PrintChunk(source, chunk, after));
    }
    std::cout.flush();
    if (reply->lines.empty() && reply->chunks.empty()) return reply->task_ended;
  }
  return true;
}

Result<bool> LogPrinter::Print(const std::vector<LogSource>& sources) {
  DET_RETURN_IF_ERROR(times_);
  if (selection_.tail > 0) DET_RETURN_IF_ERROR(StartCursors(sources));
  return Follow(sources);
}

Result<bool> LogPrinter::Follow(const std::vector<LogSource>& sources) {
  bool all_ended = true;
  for (const LogSource& source : sources) {
    auto ended = PrintNew(source);
    if (!ended.ok() && ended.status().code() == StatusCode::kNotFound && skip_unknown_) {
      all_ended = false;  // not stored yet
      continue;
    }
    if (!ended.ok()) return ended.status();
    all_ended = all_ended && *ended;
    if (head_done()) return true;
  }
  return all_ended;
}

}  // namespace det::cli
