#include "master/front/http/task_log_stream.h"

#include <algorithm>

#include "common/clock.h"
#include "master/front/http/json.h"

namespace det::master::http {
namespace {

using nlohmann::ordered_json;

constexpr auto kFollowPoll = std::chrono::milliseconds(200);
constexpr int32_t kPage = 1000;
// The task exists (the caller checked), but its record is stored asynchronously: until it is, the
// database does not know it, which is not an error for this long.
constexpr auto kUnstoredTaskGrace = std::chrono::seconds(10);

// `name` (RFC 3339) as Unix nanoseconds; 0 when absent.
Result<int64_t> QueryTime(const Request& req, const std::string& name) {
  const std::string text = req.Param(name);
  if (text.empty()) return int64_t{0};
  std::optional<int64_t> ns = ParseRfc3339Utc(text);
  if (!ns || *ns <= 0) {
    return InvalidArgument(name + ": \"" + text +
                           "\" is not an RFC 3339 time such as 2026-11-26T10:00:00Z");
  }
  return *ns;
}

std::string StreamError(const Status& error) {
  return nlohmann::json{{"error",
                         {{"grpcCode", GrpcCodeOf(error)},
                          {"httpCode", HttpStatusOf(error)},
                          {"message", error.message()},
                          {"httpStatus", std::string(StatusCodeName(error.code()))}}}}
             .dump() +
         "\n";
}

class LogStream : public BodySource {
 public:
  LogStream(FrontDoor& front, auth::Principal caller, TaskLogQuery query)
      : front_(front),
        caller_(std::move(caller)),
        query_(std::move(query)),
        next_(query_.first),
        unstored_until_(front.clock.Now() + kUnstoredTaskGrace) {
    if (query_.descending) next_.tail = query_.limit > 0 ? query_.limit : kPage;
  }

  Piece Next() override {
    if (query_.limit > 0) {
      next_.limit = static_cast<int32_t>(std::min<int64_t>(next_.limit, query_.limit - sent_));
    }
    auto reply = front_.reads.TaskLogs(caller_, next_);
    if (!reply.ok() && reply.status().code() == StatusCode::kNotFound) {
      if (query_.follow && front_.clock.Now() < unstored_until_) return {};
      if (!query_.follow) return {"", true};  // known to the master, nothing stored yet
    }
    if (!reply.ok()) return {StreamError(reply.status()), true};
    if (query_.descending) return Newest(*reply);
    if (next_.tail > 0) {  // the tail's first page: later pages follow on from it
      next_.after_id = reply->start_after_id;
      next_.tail = 0;
    }
    Piece piece;
    for (const auto& line : reply->lines) {
      piece.data += ordered_json{{"result", TaskLogLineJson(line, next_.task_id)}}.dump() + "\n";
      next_.after_id = line.id;
    }
    sent_ += static_cast<int64_t>(reply->lines.size());
    const bool all_sent = query_.limit > 0 && sent_ >= query_.limit;
    const bool caught_up = static_cast<int32_t>(reply->lines.size()) < next_.limit;
    piece.done =
        all_sent || (query_.follow ? reply->task_ended && reply->lines.empty() : caught_up);
    return piece;
  }
  std::chrono::milliseconds retry() const override { return kFollowPoll; }

 private:
  // The last lines, newest first, in one piece.
  Piece Newest(const bus::TaskLogsReply& reply) {
    Piece piece{"", true};
    for (auto line = reply.lines.rbegin(); line != reply.lines.rend(); ++line) {
      piece.data += ordered_json{{"result", TaskLogLineJson(*line, next_.task_id)}}.dump() + "\n";
    }
    return piece;
  }

  FrontDoor& front_;
  const auth::Principal caller_;
  const TaskLogQuery query_;
  bus::TaskLogsRequest next_;
  int64_t sent_ = 0;
  const MonoTime unstored_until_;
};

}  // namespace

Result<TaskLogQuery> TaskLogQueryOf(const Request& req) {
  TaskLogQuery query;
  query.first = bus::TaskLogsRequest{req.Match(1), 0, kPage};
  DET_ASSIGN_OR_RETURN(std::optional<bool> follow, QueryBool(req, "follow"));
  query.follow = follow.value_or(false);
  DET_ASSIGN_OR_RETURN(query.limit, QueryNumber(req, "limit", 0));
  const std::string order = req.Param("orderBy");
  if (!order.empty() && order != "ORDER_BY_ASC" && order != "ORDER_BY_DESC" &&
      order != "ORDER_BY_UNSPECIFIED") {
    return InvalidArgument("orderBy: expected ORDER_BY_ASC or ORDER_BY_DESC, got \"" + order +
                           "\"");
  }
  query.descending = order == "ORDER_BY_DESC";
  if (query.descending && query.follow) {
    return InvalidArgument("orderBy: ORDER_BY_DESC cannot be followed (follow=true)");
  }
  DET_ASSIGN_OR_RETURN(query.first.after_id, QueryNumber(req, "afterId", 0));
  DET_ASSIGN_OR_RETURN(query.first.since, QueryTime(req, "timestampAfter"));
  DET_ASSIGN_OR_RETURN(query.first.until, QueryTime(req, "timestampBefore"));
  return query;
}

ordered_json TaskLogLineJson(const bus::TaskLogLine& line, const std::string& task_id) {
  return {{"id", std::to_string(line.id)},
          {"taskId", task_id},
          {"agentId", line.agent_id},
          {"timestamp", Rfc3339Utc(line.timestamp, 9)},
          {"level", "LOG_LEVEL_INFO"},
          {"log", line.text},
          {"message", line.text + "\n"},
          {"stdtype", line.stdtype},
          {"source", "task"}};
}

std::shared_ptr<BodySource> TaskLogStream(FrontDoor& front, auth::Principal caller,
                                          TaskLogQuery query) {
  return std::make_shared<LogStream>(front, std::move(caller), std::move(query));
}

}  // namespace det::master::http
