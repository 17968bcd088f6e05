#pragma once

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>

#include "master/front/front_door.h"
#include "master/front/http/message.h"

namespace det::master::http {

// A task's log as Determined's TaskLogs streams it: NDJSON, one {"result": v1TaskLogsResponse}
// per line (id as text, taskId, agentId, timestamp RFC 3339, level, log, message ending in a
// newline, stdtype), and {"error": {"grpcCode", "httpCode", "message"}} ending a stream that
// failed.
struct TaskLogQuery {
  bus::TaskLogsRequest first;  // task, afterId, since/until; first.limit is the page size
  bool follow = false;         // until the task ended and every line was sent
  int64_t limit = 0;           // at most this many lines in all (0: no limit)
  bool descending = false;     // orderBy=ORDER_BY_DESC: the last `limit` lines, newest first
};

// ?follow=, limit=, orderBy=, afterId= (this master's: after that line), timestampAfter=,
// timestampBefore= (RFC 3339); InvalidArgument naming a bad one.
Result<TaskLogQuery> TaskLogQueryOf(const Request& req);

nlohmann::ordered_json TaskLogLineJson(const bus::TaskLogLine& line, const std::string& task_id);

// The stream, read page by page as the server asks for the next piece; no thread waits between
// pages. The caller was authenticated and the task found before it starts.
std::shared_ptr<BodySource> TaskLogStream(FrontDoor& front, auth::Principal caller,
                                          TaskLogQuery query);

}  // namespace det::master::http
