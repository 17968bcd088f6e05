#include "bus/rpc_server.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include "bus/agent_channel.h"
#include "bus/zap_handler.h"

namespace det::bus {

RpcServer::RpcServer(zmq::context_t& context, std::string name, const Clock& clock,
                     SocketLimits limits)
    : socket_(MakeSocket(context, zmq::socket_type::router, limits)),
      name_(std::move(name)),
      clock_(clock),
      drops_(name_ + " gateway", clock) {}

Result<std::string> RpcServer::Bind(const std::string& endpoint, const SocketSecurity& security) {
  // Only a ZAP handler vouches for a User-Id; in plaintext a peer could name one itself. Keys
  // are read only when every endpoint is CURVE.
  const bool curve = security.mode == SocketSecurity::Mode::kCurveServer;
  curve_ = (bound_++ == 0 || curve_) && curve;
  return bus::Bind(socket_, endpoint, security);
}

RpcServer::AnswerQueue::AnswerQueue() : fd_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {}

RpcServer::AnswerQueue::~AnswerQueue() {
  if (fd_ >= 0) close(fd_);
}

void RpcServer::AnswerQueue::Post(std::string key, RpcReply reply) {
  {
    std::lock_guard lock(mu_);
    answers_.emplace_back(std::move(key), std::move(reply));
  }
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t written = write(fd_, &one, sizeof(one));
}

std::vector<std::pair<std::string, RpcReply>> RpcServer::AnswerQueue::Take() {
  uint64_t count = 0;
  [[maybe_unused]] ssize_t drained = read(fd_, &count, sizeof(count));
  std::lock_guard lock(mu_);
  return std::exchange(answers_, {});
}

RpcServer::~RpcServer() {
  workers_.reset();  // finishes what runs (its answers are dropped with the socket)
}

void RpcServer::RunHandlersOn(int workers) {
  if (!answers_) answers_ = std::make_shared<AnswerQueue>();
  workers_ = std::make_unique<ThreadPool>(workers, name_ + "-rpc");
}

void RpcServer::HandleRaw(std::string method, Handler handler, Hold hold) {
  if (hold) {
    if (!answers_) answers_ = std::make_shared<AnswerQueue>();
    holds_[method] = std::move(hold);
  }
  handlers_[std::move(method)] = std::move(handler);
}

void RpcServer::Receive() {
  SendAnswers();
  while (ReceiveFrames(socket_, &frames_)) {
    const std::string identity = frames_[0].to_string();
    // Under CURVE a request is known by its client's key and its id: a retry is one from the same
    // key, and no other key is ever answered from another's requests.
    std::string client_key = curve_ ? ClientKeyOf(frames_.back()) : "";  // before parsing
    if (!IsZ85Key(client_key)) client_key.clear();
    // A REQ peer sends [identity][""][type][header][body]; without the delimiter it cannot be
    // answered at all.
    if (frames_.size() < 2 || frames_[1].size() != 0) {
      drops_.Record(identity, InvalidArgument("not a REQ envelope (no empty delimiter frame)"));
      continue;
    }
    auto envelope = ParseEnvelope(frames_, 2);
    Result<RpcRequest> request =
        envelope.ok() ? envelope->Decode<RpcRequest>() : Result<RpcRequest>(envelope.status());
    if (!request.ok()) {
      drops_.Record(identity, request.status());
      RpcReply error;
      error.code = static_cast<int32_t>(StatusCode::kInvalidArgument);
      error.error = "malformed request: " + request.status().message();
      Reply(identity, error);
      continue;
    }
    const std::string key = ReplyKey(client_key, request->request_id);
    if (auto cached = replies_.find(key); cached != replies_.end()) {
      Reply(identity, cached->second);  // a retry: same answer, no second execution
      continue;
    }
    Run(identity, std::move(client_key), std::move(request).value());
  }
}

std::string RpcServer::ReplyKey(const std::string& client_key, const std::string& request_id) {
  return client_key.empty() ? request_id : client_key + "/" + request_id;
}

void RpcServer::Run(const std::string& identity, std::string client_key, RpcRequest request) {
  auto found = holds_.find(request.method);
  const Hold* hold = found == holds_.end() ? nullptr : &found->second;
  RpcContext context{request.request_id, request.token, std::move(client_key)};
  if (!workers_ && !hold) {
    RpcReply reply = Dispatch(context, request);
    Remember(ReplyKey(context.client_key, request.request_id), reply);
    Reply(identity, reply);
    return;
  }
  // Requests without an id cannot be retried: each gets a key of its own.
  const std::string key = request.request_id.empty()
                              ? "\x01unnamed-" + std::to_string(++unnamed_)
                              : ReplyKey(context.client_key, request.request_id);
  auto running = running_.find(key);
  if (running != running_.end()) {
    running->second = identity;  // a retry while it runs: the answer goes to the new socket
    return;
  }
  running_[key] = identity;
  if (!workers_) {
    Finish(hold, key, Dispatch(context, request));
    return;
  }
  workers_->Post([this, hold, key, context = std::move(context), request = std::move(request)] {
    Finish(hold, key, Dispatch(context, request));
  });
}

void RpcServer::Finish(const Hold* hold, std::string key, RpcReply reply) {
  if (!hold || reply.code != 0) {
    answers_->Post(std::move(key), std::move(reply));
    return;
  }
  (*hold)([answers = answers_, key = std::move(key),
           reply = std::move(reply)](const Status& stored) mutable {
    if (!stored.ok()) {
      reply.code = static_cast<int32_t>(stored.code());
      reply.error = stored.message();
      reply.body.data.clear();
    }
    answers->Post(std::move(key), std::move(reply));
  });
}

void RpcServer::SendAnswers() {
  if (!answers_) return;
  for (const auto& [key, answer] : answers_->Take()) {
    auto running = running_.find(key);
    if (running == running_.end()) continue;
    const std::string identity = running->second;
    running_.erase(running);
    if (!answer.request_id.empty()) Remember(key, answer);
    Reply(identity, answer);
  }
}

RpcReply RpcServer::Dispatch(const RpcContext& context, const RpcRequest& request) {
  ++handled_;
  RpcReply reply;
  reply.request_id = request.request_id;
  auto it = handlers_.find(request.method);
  if (it == handlers_.end()) {
    reply.code = static_cast<int32_t>(StatusCode::kNotFound);
    reply.error = "unknown method \"" + Printable(request.method) + "\"";
    return reply;
  }
  Result<std::string> result = it->second(context, request.params);
  if (result.ok()) {
    reply.body.data = std::move(result.value());
  } else {
    reply.code = static_cast<int32_t>(result.status().code());
    reply.error = result.status().message();
  }
  return reply;
}

void RpcServer::Reply(const std::string& identity, const RpcReply& reply) {
  (void)Send(socket_, {identity, ""}, MakeHeader(name_, 0, 0, clock_), reply);
}

void RpcServer::Remember(const std::string& key, const RpcReply& reply) {
  if (reply.request_id.empty()) return;
  auto size_of = [](const RpcReply& r) { return r.body.data.size() + r.error.size(); };
  if (auto known = replies_.find(key); known != replies_.end()) {
    remembered_bytes_ -= std::min(remembered_bytes_, size_of(known->second));
    known->second = reply;
  } else {
    replies_.emplace(key, reply);
    reply_order_.push_back(key);
  }
  remembered_bytes_ += size_of(reply);
  while (!reply_order_.empty() &&
         (reply_order_.size() > kRememberedReplies || remembered_bytes_ > kRememberedBytes)) {
    if (auto old = replies_.find(reply_order_.front()); old != replies_.end()) {
      remembered_bytes_ -= std::min(remembered_bytes_, size_of(old->second));
      replies_.erase(old);
    }
    reply_order_.pop_front();
  }
}

}  // namespace det::bus
