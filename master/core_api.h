#pragma once

#include <memory>
#include <string>
#include <thread>
#include <zmq.hpp>

#include "common/status.h"
#include "master/allocation_token.h"
#include "master/experiment_api.h"
#include "storage/database.h"

namespace httplib {
class Server;
}

namespace det::master {

// The Core API: the REST endpoints trial code calls (harness/det_harness.py), over HTTP on
// master.yaml's `port`.
//
// Every call carries `Authorization: Bearer <allocation token>` (DET_SESSION_TOKEN); a trial's
// calls must name that allocation's trial. What a call reports is committed to PostgreSQL before
// the answer (a metric sent again is stored once), then told to the experiment service, whose
// answer says whether the run should stop.
//
//   POST /api/v1/trials/{id}/metrics      {"group": "training"|"validation", "steps_completed": N,
//                                          "metrics": {...}}
//   POST /api/v1/trials/{id}/checkpoints  {"uuid", "steps_completed", "resources", "metadata"}
//   POST /api/v1/trials/{id}/early_exit   {"reason": "ERRORED"|"INVALID_HP"|"USER_CANCELED"}
//   POST /api/v1/trials/{id}/progress     {"progress": 0..1}
//   GET  /api/v1/trials/{id}/context      the model definition (tar.gz)
//   GET  /api/v1/allocations/{id}/signals/preemption?timeout_seconds=N   long poll:
//                                         {"preempt": bool, "reason": "..."}
//   POST /api/v1/allocations/{id}/ready
//   GET  /api/v1/harness/det_harness.py   the harness module (no token needed)
//
// Errors are JSON {"error": "..."} with 400 (bad input, naming the field), 401 (token), 403
// (another trial), 404, 503 (the experiment service did not answer).
//
// Threading: httplib's worker threads; each request opens its own inproc client.
class CoreApi {
 public:
  // Also serves the user REST API for experiments (experiment_api.h) with `user_access`.
  CoreApi(zmq::context_t& context, storage::DbConfig db, AllocationTokens tokens,
          UserApiAccess user_access);
  ~CoreApi();

  // Binds host:port (port 0: a free one); the port bound.
  Result<int> Bind(const std::string& host, int port);
  void Start();
  void Stop();

 private:
  void Route();

  zmq::context_t& context_;
  storage::Database db_;
  AllocationTokens tokens_;
  UserApiAccess user_access_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
};

}  // namespace det::master
