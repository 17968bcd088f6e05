#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "master/front/front_door.h"
#include "master/front/http/message.h"

namespace det::master::http {

// Logs as Determined's TaskLogs and TrialLogs stream them: NDJSON, one {"result": line} per log
// line, and {"error": {"grpcCode", "httpCode", "message"}} ending a stream that failed.
struct LogQuery {
  bus::TaskLogsRequest first;  // afterId, since/until; first.limit is the page size
  bool follow = false;         // until the work ended and every line was sent
  int64_t limit = 0;           // at most this many lines in all (0: no limit)
  bool descending = false;     // orderBy=ORDER_BY_DESC: the last `limit` lines, newest first
};

// ?follow=, limit=, orderBy=, afterId= (this master's: after that line of the first task),
// timestampAfter=, timestampBefore= (RFC 3339); InvalidArgument naming a bad one.
Result<LogQuery> LogQueryOf(const Request& req);

// Whose lines a stream sends: the tasks, in order (a trial's runs), and whether more may come.
struct LogTasks {
  std::vector<std::string> task_ids;
  bool over = true;  // no task will be added (a trial that ended; a task's stream always)
};
struct LogSource {
  // Asked again whenever the stream has sent every line of the tasks it knows.
  std::function<Result<LogTasks>()> tasks;
  // One line as the stream sends it (under "result").
  std::function<nlohmann::ordered_json(const bus::TaskLogLine&, const std::string& task_id)> line;
};

// v1TaskLogsResponse: id (text), taskId, agentId, timestamp (RFC 3339), level, log, message
// (ending in a newline), stdtype, source.
nlohmann::ordered_json TaskLogLineJson(const bus::TaskLogLine& line, const std::string& task_id);

// The stream, read page by page as the server asks for the next piece; no thread waits between
// pages. The caller was authenticated and the work found before it starts.
std::shared_ptr<BodySource> LogStream(FrontDoor& front, auth::Principal caller, LogQuery query,
                                      LogSource source);

}  // namespace det::master::http
