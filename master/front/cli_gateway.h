#pragma once

#include <atomic>
#include <string>
#include <thread>
#include <zmq.hpp>

#include "bus/event_broker.h"
#include "bus/rpc_server.h"
#include "master/front/answer_cache.h"
#include "master/front/front_door.h"

namespace det::master {

// The CLI gateway: the ROUTER the det CLI reaches with REQ. It only translates transport: each
// rpc method is the same typed call of the front door (front_door.h), called for the user whose
// token the request carries.
//
// master.info and user.login need no token; every other method needs a live session or access
// token (Unauthenticated otherwise), and admin methods an admin (PermissionDenied).
//
// The lists det asks for most (agents, resource pools, the whole job queue) are answered from
// replies already encoded (AnswerCache), fetched again when the registry's events say they
// changed or after a second: no round trip to an actor.
//
// Threading: an actor; Start() runs it on its own thread, and the methods on kHandlerThreads
// threads of their own (the front door is thread-safe).
class CliGateway {
 public:
  static constexpr int kHandlerThreads = 8;
  static constexpr int kLoginsAtOnce = 2;

  // `front`'s parts outlive the gateway; `events`: the broker whose events make the cached lists
  // stale.
  CliGateway(zmq::context_t& context, const Clock& clock, FrontDoor& front,
             int64_t max_message_bytes, bus::EventBrokerEndpoints events);
  ~CliGateway();

  Result<std::string> Bind(const std::string& endpoint, const bus::SocketSecurity& security);
  void Start();
  void Stop();
  // Requests answered and malformed ones dropped; any thread may ask.
  uint64_t handled() const { return server_.handled(); }
  uint64_t dropped() const { return server_.drops().total(); }

 private:
  using Principal = auth::Principal;

  void Run();
  void HandleUserMethods();
  // Registers a method for logged-in callers; `handler` gets who is calling.
  template <class Req, class Rep>
  void Serve(std::function<Result<Rep>(const Principal&, const Req&)> handler);
  // Registers one of the forwarded methods (method_table.h).
  template <class Req>
  void Forward();
  // Registers a method for logged-in callers whose request without parameters (Req{}) is
  // answered from the cache's entry `key`, filled by `fetch`; any other request by `fetch` too.
  template <class Req, class Rep>
  void ServeCached(std::string key, std::function<Result<Rep>(const Principal&, const Req&)> fetch);

  FrontDoor& front_;
  AnswerCache answers_;
  bus::RpcServer server_;
  std::atomic<bool> stop_{false};
  std::atomic<int> logins_under_way_{0};
  std::thread thread_;
};

}  // namespace det::master
