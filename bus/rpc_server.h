#pragma once

#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>
#include <zmq.hpp>

#include "bus/catalog/rpc.h"
#include "bus/drop_log.h"
#include "bus/envelope.h"
#include "bus/security.h"
#include "bus/socket.h"
#include "common/thread_pool.h"

namespace det::bus {

// What a handler knows about the caller.
struct RpcContext {
  std::string request_id;
  std::string token;
  // The caller's CURVE public key (Z85), as the ZAP handler admitted it; "" in plaintext.
  std::string client_key;
};

// The request/reply gateway's server: a ROUTER that REQ clients (the det CLI) call.
//
// Each request is an rpc.request naming a method; the registered handler's reply (or error) goes
// back as an rpc.reply. Replies are remembered by request id for a while, so a client that
// retries after a lost reply (Lazy Pirate) gets the same answer without the method running twice.
// A malformed request is counted and answered with an INVALID_ARGUMENT reply when the peer can be
// answered at all; it never stops the server.
//
// Threading: owned by one actor; poll socket(), call Receive() when readable. Handlers run on that
// thread and must not block for long, unless RunHandlersOn() gave them threads of their own.
class RpcServer {
 public:
  using Handler = std::function<Result<std::string>(const RpcContext&, const Bytes& params)>;

  RpcServer(zmq::context_t& context, std::string name, const Clock& clock,
            SocketLimits limits = {});

  Result<std::string> Bind(const std::string& endpoint, const SocketSecurity& security);
  zmq::socket_t& socket() { return socket_; }

  ~RpcServer();

  // Runs handlers on `workers` threads instead of Receive()'s caller, so that a slow method (a
  // login's password hash, a call another component takes seconds over) holds no other up.
  // Handlers must then be thread-safe. A request retried while it runs is not run again: its
  // answer goes to whoever asked last. Call before the first Receive().
  void RunHandlersOn(int workers);
  // With workers or held methods: readable while answers wait to be sent. The owner polls it
  // beside socket() and calls Receive() when either is readable; -1 otherwise.
  int answers_fd() const { return answers_ ? answers_->fd() : -1; }

  // Holds a method's successful answer until what it changed is durable: `hold(release)` is
  // called right after the handler, on the handler's thread, and must arrange for `release` to be
  // called exactly once, from any thread (a store's commit, say). Release(OK) sends the answer;
  // any other status is sent instead of it. A failed handler is answered at once.
  using Release = std::function<void(const Status& stored)>;
  using Hold = std::function<void(Release release)>;

  // `hold`: see Hold. Without workers the owner must poll answers_fd() for held answers.
  void HandleRaw(std::string method, Handler handler, Hold hold = nullptr);
  // Typed registration: the method name is Req::kType; params decode as Req, replies encode Rep.
  template <Message Req, Message Rep>
  void Handle(std::function<Result<Rep>(const RpcContext&, const Req&)> handler,
              Hold hold = nullptr) {
    HandleRaw(
        std::string(Req::kType),
        [handler](const RpcContext& ctx, const Bytes& params) -> Result<std::string> {
          Req request{};
          if (!params.data.empty()) {
            DET_RETURN_IF_ERROR(DecodeInto(params.data, &request, Req::kType));
          }
          DET_ASSIGN_OR_RETURN(Rep reply, handler(ctx, request));
          return Encode(reply);
        },
        std::move(hold));
  }

  void Receive();
  uint64_t handled() const { return handled_.load(std::memory_order_relaxed); }  // any thread
  const DropLog& drops() const { return drops_; }

  // Replies kept for retried requests: the latest 10,000, and no more than 32 MiB of them (a
  // retry of an older one runs again).
  static constexpr size_t kRememberedReplies = 10000;
  static constexpr size_t kRememberedBytes = 32 << 20;
  size_t remembered_bytes() const { return remembered_bytes_; }  // the Receive() thread

 private:
  // Answers finished on other threads (workers, releases of held answers), keyed by request;
  // shared with those threads, so a release after the server is gone is harmless.
  class AnswerQueue {
   public:
    AnswerQueue();
    ~AnswerQueue();
    int fd() const { return fd_; }
    void Post(std::string key, RpcReply reply);  // any thread
    std::vector<std::pair<std::string, RpcReply>> Take();

   private:
    int fd_;
    std::mutex mu_;
    std::vector<std::pair<std::string, RpcReply>> answers_;
  };

  RpcReply Dispatch(const RpcContext& context, const RpcRequest& request);
  void Reply(const std::string& identity, const RpcReply& reply);
  // What a request's reply is remembered by: its id, within its client's key.
  static std::string ReplyKey(const std::string& client_key, const std::string& request_id);
  void Remember(const std::string& key, const RpcReply& reply);
  // Runs `request` of `client_key` for `identity`: here, or on a worker (answered by
  // SendAnswers()).
  void Run(const std::string& identity, std::string client_key, RpcRequest request);
  // Queues `reply` for SendAnswers(), once `hold` (its method's, if any) releases it. Any thread.
  void Finish(const Hold* hold, std::string key, RpcReply reply);
  // Sends the answers the workers finished and the holds released.
  void SendAnswers();

  zmq::socket_t socket_;
  int bound_ = 0;       // endpoints bound
  bool curve_ = false;  // every one as a CURVE server: each message carries its client's key
  std::string name_;
  const Clock& clock_;
  DropLog drops_;
  std::map<std::string, Handler, std::less<>> handlers_;
  std::map<std::string, Hold, std::less<>> holds_;  // by method; read-only once serving
  std::unordered_map<std::string, RpcReply> replies_;
  std::deque<std::string> reply_order_;
  size_t remembered_bytes_ = 0;
  std::atomic<uint64_t> handled_{0};
  std::vector<zmq::message_t> frames_;
  // With workers or holds: requests running or held (by id → the identity that asked last) and
  // the answers that are ready.
  std::unique_ptr<ThreadPool> workers_;
  std::shared_ptr<AnswerQueue> answers_;
  std::unordered_map<std::string, std::string> running_;  // by request id (or a key of its own)
  uint64_t unnamed_ = 0;
};

}  // namespace det::bus
