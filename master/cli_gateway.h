#pragma once

#include <atomic>
#include <string>
#include <thread>
#include <zmq.hpp>

#include "bus/catalog/master.h"
#include "bus/catalog/tasks.h"
#include "bus/catalog/users.h"
#include "bus/rpc_client.h"
#include "bus/rpc_server.h"
#include "master/auth/users.h"
#include "master/master_config.h"
#include "storage/database.h"

namespace det::master {

// The CLI gateway: the ROUTER the det CLI reaches with REQ. It answers master.info itself, reads
// task logs from the database, answers user and token methods through `users`, and forwards
// agent, task and job methods to the agent registry and experiment and trial methods to the
// experiment service over inproc (same rpc messages).
//
// Every method but master.info and user.login needs a live session or access token in the
// request (Unauthenticated otherwise); enabling and disabling agents and slots needs an admin
// (PermissionDenied).
//
// Threading: an actor; Start() runs it on its own thread.
class CliGateway {
 public:
  // `database` (read for task logs) and `users` outlive the gateway.
  CliGateway(zmq::context_t& context, const Clock& clock, bus::MasterInfo info,
             int64_t max_message_bytes, storage::Database& database, auth::Users& users);
  ~CliGateway();

  Result<std::string> Bind(const std::string& endpoint, const bus::SocketSecurity& security);
  void Start();
  void Stop();

 private:
  enum class Access { kUser, kAdmin };
  using Principal = auth::Principal;

  void Run();
  void HandleUserMethods();
  // Registers a method for callers with `access`; others get Unauthenticated or PermissionDenied.
  template <class Req, class Rep>
  void Serve(Access access, std::function<Result<Rep>(const Principal&, const Req&)> handler);
  // Answers Req by asking `to` (the agent registry or the experiment service) over inproc.
  template <class Req, class Rep>
  void Forward(bus::RpcClient& to, Access access = Access::kUser);
  Result<bus::TaskLogsReply> ReadTaskLogs(const bus::TaskLogsRequest& request);

  bus::MasterInfo info_;
  storage::Database& database_;
  auth::Users& users_;
  bus::RpcServer server_;
  bus::RpcClient registry_;
  bus::RpcClient experiments_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace det::master
