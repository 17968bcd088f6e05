#pragma once

#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>
#include <zmq.hpp>

#include "bus/catalog/rpc.h"
#include "bus/drop_log.h"
#include "bus/envelope.h"
#include "bus/security.h"
#include "bus/socket.h"

namespace det::bus {

// What a handler knows about the caller.
struct RpcContext {
  std::string request_id;
  std::string token;
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
// thread and must not block for long.
class RpcServer {
 public:
  using Handler = std::function<Result<std::string>(const RpcContext&, const Bytes& params)>;

  RpcServer(zmq::context_t& context, std::string name, const Clock& clock,
            SocketLimits limits = {});

  Result<std::string> Bind(const std::string& endpoint, const SocketSecurity& security);
  zmq::socket_t& socket() { return socket_; }

  void HandleRaw(std::string method, Handler handler);
  // Typed registration: the method name is Req::kType; params decode as Req, replies encode Rep.
  template <Message Req, Message Rep>
  void Handle(std::function<Result<Rep>(const RpcContext&, const Req&)> handler) {
    HandleRaw(std::string(Req::kType),
              [handler](const RpcContext& ctx, const Bytes& params) -> Result<std::string> {
                Req request{};
                if (!params.data.empty()) {
                  DET_RETURN_IF_ERROR(DecodeInto(params.data, &request, Req::kType));
                }
                DET_ASSIGN_OR_RETURN(Rep reply, handler(ctx, request));
                return Encode(reply);
              });
  }

  void Receive();
  uint64_t handled() const { return handled_.load(std::memory_order_relaxed); }  // any thread
  const DropLog& drops() const { return drops_; }

 private:
  static constexpr size_t kRememberedReplies = 10000;
  RpcReply Dispatch(const RpcRequest& request);
  void Reply(const std::string& identity, const RpcReply& reply);
  void Remember(const std::string& request_id, const RpcReply& reply);

  zmq::socket_t socket_;
  std::string name_;
  const Clock& clock_;
  DropLog drops_;
  std::map<std::string, Handler, std::less<>> handlers_;
  std::unordered_map<std::string, RpcReply> replies_;
  std::deque<std::string> reply_order_;
  std::atomic<uint64_t> handled_{0};
  std::vector<zmq::message_t> frames_;
};

}  // namespace det::bus
