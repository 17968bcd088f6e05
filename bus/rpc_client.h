#pragma once

#include <memory>
#include <string>
#include <zmq.hpp>

#include "bus/catalog/rpc.h"
#include "bus/envelope.h"
#include "bus/handshake_watch.h"
#include "bus/security.h"
#include "bus/socket.h"

namespace det::bus {

struct RpcClientConfig {
  Duration timeout = std::chrono::seconds(3);  // per attempt
  int attempts = 3;
};

// The request/reply gateway's client (the ZeroMQ guide's Lazy Pirate): a REQ socket that waits
// `timeout` for each reply and, on silence, discards the socket (a REQ cannot send twice in a row)
// and retries on a fresh one with the same request id, so the server can answer a retry from its
// memory instead of running the method again.
//
// A connection whose security handshake fails (keys that do not match the server's) ends the call
// at once with PermissionDenied naming the failure (handshake_watch.h); handshake_failure() then
// says which, for callers that add advice of their own.
//
// Threading: one thread at a time. Blocking: Call waits up to attempts x timeout of real time.
class RpcClient {
 public:
  RpcClient(zmq::context_t& context, std::string endpoint, SocketSecurity security,
            RpcClientConfig config = {}, SocketLimits limits = {});

  // Returns the reply body, the server's error as a Status, or Unavailable after the last attempt.
  Result<Bytes> CallRaw(const std::string& method, const Bytes& params, const std::string& token);
  // The same for a request already made: its id is kept, so that a request another way already
  // sent (a relay that ended before answering) is answered once by the server (RpcServer).
  Result<Bytes> CallRaw(const RpcRequest& request);

  template <Message Req, Message Rep>
  Result<Rep> Call(const Req& request, const std::string& token = "") {
    DET_ASSIGN_OR_RETURN(Bytes body,
                         CallRaw(std::string(Req::kType), Bytes{Encode(request)}, token));
    return Decode<Rep>(body.data);
  }

  int attempts_made() const { return attempts_made_; }
  std::optional<HandshakeFailure> handshake_failure() const { return handshake_failure_; }
  // Whether any call of this client got a message back from the server: under CURVE, proof that
  // the server holds the key the client was given.
  bool answered() const { return answered_; }

 private:
  Result<RpcReply> Attempt(const RpcRequest& request);

  zmq::context_t& context_;
  std::string endpoint_;
  SocketSecurity security_;
  RpcClientConfig config_;
  SocketLimits limits_;
  void CloseSocket();

  std::unique_ptr<zmq::socket_t> socket_;
  std::unique_ptr<HandshakeWatch> watch_;  // of socket_
  int attempts_made_ = 0;
  std::optional<HandshakeFailure> handshake_failure_;
  bool answered_ = false;
};

// What a call that got no reply from `endpoint` after every attempt of `config` says.
Status NoReply(const std::string& endpoint, const RpcClientConfig& config);

// A random 128-bit id as 32 hex characters.
std::string RandomId();
// A random UUID (version 4, RFC 9562) in its text form, "xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx":
// the form of Determined's task ids, which its CLI requires.
std::string RandomUuid();

}  // namespace det::bus
