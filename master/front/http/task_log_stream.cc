#include "master/front/http/task_log_stream.h"

#include <algorithm>

#include "common/clock.h"
#include "master/front/http/json.h"

namespace det::master::http {
namespace {

using nlohmann::ordered_json;

constexpr auto kFollowPoll = std::chrono::milliseconds(200);
constexpr int32_t kPage = 1000;
// A task exists (the caller checked), but its record is stored asynchronously: until it is, the
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

class Stream : public BodySource {
 public:
  Stream(FrontDoor& front, auth::Principal caller, LogQuery query, LogSource source)
      : front_(front),
        caller_(std::move(caller)),
        query_(std::move(query)),
        source_(std::move(source)),
        next_(query_.first),
        unstored_until_(front.clock.Now() + kUnstoredTaskGrace) {}

  Piece Next() override {
    if (index_ >= tasks_.task_ids.size()) {
      auto known = source_.tasks();
      if (!known.ok()) return {StreamErrorLine(known.status()), true};
      tasks_ = std::move(*known);
      if (query_.descending) return Newest();
      if (index_ >= tasks_.task_ids.size()) return {"", !query_.follow || tasks_.over};
    }
    const std::string& task = tasks_.task_ids[index_];
    next_.task_id = task;
    next_.limit = kPage;
    if (query_.limit > 0) {
      next_.limit = static_cast<int32_t>(std::min<int64_t>(kPage, query_.limit - sent_));
    }
    auto reply = front_.reads.TaskLogs(caller_, next_);
    if (!reply.ok() && reply.status().code() == StatusCode::kNotFound) {
      // Known to the master, nothing stored yet.
      if (query_.follow && front_.clock.Now() < unstored_until_) return {};
      return NextTask();
    }
    if (!reply.ok()) return {StreamErrorLine(reply.status()), true};
    Piece piece;
    for (const auto& line : reply->lines) {
      piece.data += ordered_json{{"result", source_.line(line, task)}}.dump() + "\n";
      next_.after_id = line.id;
    }
    sent_ += static_cast<int64_t>(reply->lines.size());
    if (query_.limit > 0 && sent_ >= query_.limit) return {std::move(piece.data), true};
    const bool caught_up = static_cast<int32_t>(reply->lines.size()) < next_.limit;
    if (caught_up && (reply->task_ended || !query_.follow)) {
      Piece rest = NextTask();
      piece.done = rest.done;
    }
    return piece;
  }
  std::chrono::milliseconds retry() const override { return kFollowPoll; }

 private:
  // On to the next task (a trial's next run); done when there is none and none will come.
  Piece NextTask() {
    ++index_;
    next_.after_id = 0;
    if (index_ < tasks_.task_ids.size()) return {};
    return {"", !query_.follow || tasks_.over};
  }
  // The last lines of the last task, newest first, in one piece.
  Piece Newest() {
    if (tasks_.task_ids.empty()) return {"", true};
    const std::string& task = tasks_.task_ids.back();
    next_.task_id = task;
    next_.tail = query_.limit > 0 ? query_.limit : kPage;
    next_.limit = static_cast<int32_t>(next_.tail);
    auto reply = front_.reads.TaskLogs(caller_, next_);
    if (!reply.ok() && reply.status().code() == StatusCode::kNotFound) return {"", true};
    if (!reply.ok()) return {StreamErrorLine(reply.status()), true};
    Piece piece{"", true};
    for (auto line = reply->lines.rbegin(); line != reply->lines.rend(); ++line) {
      piece.data += ordered_json{{"result", source_.line(*line, task)}}.dump() + "\n";
    }
    return piece;
  }

  FrontDoor& front_;
  const auth::Principal caller_;
  const LogQuery query_;
  const LogSource source_;
  LogTasks tasks_{{}, false};
  size_t index_ = 0;
  bus::TaskLogsRequest next_;
  int64_t sent_ = 0;
  const MonoTime unstored_until_;
};

}  // namespace

Result<LogQuery> LogQueryOf(const Request& req) {
  LogQuery query;
  query.first = bus::TaskLogsRequest{"", 0, kPage};
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

std::shared_ptr<BodySource> LogStream(FrontDoor& front, auth::Principal caller, LogQuery query,
                                      LogSource source) {
  return std::make_shared<Stream>(front, std::move(caller), std::move(query), std::move(source));
}

}  // namespace det::master::http
