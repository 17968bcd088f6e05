#pragma once

#include <memory>
#include <string>
#include <thread>
#include <zmq.hpp>

#include "common/status.h"
#include "master/allocation_token.h"
#include "master/api.h"
#include "master/experiment_api.h"
#include "master/http_routes.h"
#include "master/rendezvous.h"
#include "master/resource_config.h"
#include "storage/database.h"
#include "storage/experiments_repo.h"

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
//   POST /api/v1/allocations/{id}/rendezvous  {"rank": DET_CONTAINER_RANK, "num_containers":
//                                         DET_NUM_CONTAINERS, "address", "port" (the chief's),
//                                         "slots"}; blocks until every container arrived:
//                                         {"rank", "num_containers", "addresses", "slots",
//                                          "chief_address", "chief_port", "world_size",
//                                          "gloo_port_range", "nccl_port_range"}; after
//                                         task_container_defaults.rendezvous_timeout a 400 and
//                                         the allocation is killed
//   GET  /api/v1/harness/det_harness.py   the harness module (no token needed)
//
// Errors are JSON {"error": "..."} with 400 (bad input, naming the field), 401 (token), 403
// (another trial), 404, 503 (the experiment service did not answer).
//
// Threading: httplib's worker threads (enough for every container of large distributed trials to
// wait at the rendezvous at once); each request opens its own inproc client.
// The Core API's request bodies as its routes read them (exposed for tests and the fuzzer):
// InvalidArgument naming the field that is missing, of the wrong type or out of range, or saying
// the body is not a JSON object. Who sent them (the allocation, the trial) is the route's to fill
// in. Never throw.
//
// POST .../metrics: kind "training" or "validation" (the `group`), steps, metrics_json (an
// object).
Result<bus::TrialReport> MetricsReportOf(const std::string& body);
// POST .../checkpoints: uuid, steps_completed, resources and metadata as JSON text; state
// COMPLETED.
Result<storage::CheckpointRecord> CheckpointOf(const std::string& body);
// POST .../early_exit (kind "exit", the reason as given) and .../progress (kind "progress").
Result<bus::TrialReport> EarlyExitReportOf(const std::string& body);
Result<bus::TrialReport> ProgressReportOf(const std::string& body);
// POST /api/v1/allocations/{id}/rendezvous.
struct RendezvousRequest {
  RendezvousArrival arrival;
  int num_containers = 0;
};
Result<RendezvousRequest> RendezvousRequestOf(const std::string& body);

class CoreApi {
 public:
  struct Options {
    Api* api = nullptr;  // what the user REST API calls (experiment_api.h, user_http.h); not owned
    DistributedTrainingConfig distributed;
    std::string tls_cert;  // PEM files; both set: HTTPS
    std::string tls_key;
    std::string webui_dir;  // the WebUI's files, served at `/`; "": a page that says so
  };
  CoreApi(zmq::context_t& context, storage::DbConfig db, AllocationTokens tokens, Options options);
  ~CoreApi();

  // Binds host:port (port 0: a free one); the port bound. InvalidArgument naming security.tls
  // when the certificate or key cannot be used.
  Result<int> Bind(const std::string& host, int port);
  void Start();
  void Stop();
  // "get /api/v1/agents", ...: every route this server answers (http_routes.h).
  const std::vector<std::string>& operations() const { return routes_.operations(); }

 private:
  void Route();
  void ServeWebUi();

  zmq::context_t& context_;
  storage::Database db_;
  AllocationTokens tokens_;
  Options options_;
  Rendezvous rendezvous_;
  std::unique_ptr<httplib::Server> server_;
  HttpRoutes routes_;
  std::thread thread_;
};

}  // namespace det::master
