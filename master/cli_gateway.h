#pragma once

#include <atomic>
#include <string>
#include <thread>
#include <zmq.hpp>

#include "bus/catalog/master.h"
#include "bus/rpc_client.h"
#include "bus/rpc_server.h"
#include "master/master_config.h"

namespace det::master {

// The CLI gateway: the ROUTER the det CLI reaches with REQ. It answers master.info itself and
// forwards agent queries to the agent registry over inproc (same rpc messages).
//
// Threading: an actor; Start() runs it on its own thread.
class CliGateway {
 public:
  CliGateway(zmq::context_t& context, const Clock& clock, bus::MasterInfo info,
             int64_t max_message_bytes);
  ~CliGateway();

  Result<std::string> Bind(const std::string& endpoint, const bus::SocketSecurity& security);
  void Start();
  void Stop();

 private:
  void Run();

  bus::MasterInfo info_;
  bus::RpcServer server_;
  bus::RpcClient registry_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace det::master
