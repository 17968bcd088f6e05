#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <zmq.hpp>

#include "common/status.h"
#include "master/auth/allocation_token.h"
#include "master/cluster/resource_config.h"
#include "master/experiments/rendezvous.h"
#include "master/experiments/trial_reports.h"
#include "master/front/front_door.h"
#include "master/front/http/preemption_board.h"
#include "master/front/http/router.h"
#include "storage/experiments_repo.h"
#include "storage/models_repo.h"

namespace det::master::http {

// The Core API: the REST endpoints trial code calls, at Determined's paths with its JSON shapes
// (what Determined 0.38.1's Python library sends, and harness/det_harness.py, its small
// standard-library counterpart), over HTTP on master.yaml's `port`.
//
// Every call carries the run's allocation token (DET_SESSION_TOKEN) as Determined's library sends
// it, `Grpc-Metadata-x-allocation-token: Bearer <token>`, or as `Authorization: Bearer <token>`;
// a trial's calls must name that allocation's trial. What a call reports is committed to
// PostgreSQL before the answer (a metric sent again is stored once), then told to the experiment
// service, whose answer says whether the run should stop.
//
//   POST /api/v1/runs/start               {"runId": trial id, "checkpointStorage"}: {}
//   POST /api/v1/trials/{id}/metrics      {"group": "training"|"validation", "metrics":
//                                          {"stepsCompleted": N, "trialRunId", "reportTime",
//                                           "metrics": {"avgMetrics": {...}}}}
//   POST /api/v1/checkpoints              {"uuid", "metadata": {"steps_completed": N, ...},
//                                          "resources": {path: size}, "allocationId", ...}
//   GET  /api/v1/checkpoints/{uuid}       {"checkpoint": v1Checkpoint} (the run's experiment's
//                                          checkpoints only; a user's token reads any, with its
//                                          trial's hparams, validation and experiment config)
//   POST /api/v1/checkpoints/{uuid}/metadata  {"checkpoint": {"metadata": {...}}} replaces its
//                                          metadata (a run: its experiment's; a user: any)
//                                          -> {"checkpoint"}
//   POST /api/v1/trials/{id}/early_exit   {"reason": "EXITED_REASON_ERRORED" | ..._INVALID_HP |
//                                          ..._INIT_INVALID_HP | ..._USER_REQUESTED_STOP}
//   POST /api/v1/trials/{id}/progress     {"progress": 0..1, "is_raw": true}
//   GET  /api/v1/trials/{id}/context      the model definition (tar.gz)
//   GET  /api/v1/allocations/{id}/signals/preemption?timeout_seconds=N   long poll:
//                                         {"preempt": bool, "reason": "..."}
//   POST /api/v1/allocations/{id}/signals/ack_preemption   (empty): {}
//   POST /api/v1/allocations/{id}/ready
//   POST /api/v1/allocations/{id}/rendezvous  {"rank": DET_CONTAINER_RANK, "num_containers":
//                                         DET_NUM_CONTAINERS, "address", "port" (the chief's),
//                                         "slots"}; answered once every container arrived:
//                                         {"rank", "num_containers", "addresses", "slots",
//                                          "chief_address", "chief_port", "world_size",
//                                          "gloo_port_range", "nccl_port_range"}; after
//                                         task_container_defaults.rendezvous_timeout a 400 and
//                                         the allocation is killed
//   GET  /api/v1/harness/det_harness.py   the harness module (no token needed)
//   GET  /checkpoints/{uuid}              a user's download of a checkpoint: its files as a
//                                         gzipped tar, streamed (checkpoint_download.cc)
//
// Errors are JSON {"error": "..."} with 400 (bad input, naming the field), 401 (token), 403
// (another trial), 404, 503 (the experiment service did not answer).
//
// Threading: handlers run on the HTTP server's workers; the long poll and the rendezvous are
// parked (no thread waits), answered by Tick() or by the arrival that completes a meeting.
//
// The Core API's request bodies as its routes read them (exposed for tests and the fuzzer):
// InvalidArgument naming the field that is missing, of the wrong type or out of range, or saying
// the body is not a JSON object. Who sent them (the allocation, the trial) is the route's to fill
// in. Never throw.
//
// POST .../metrics: kind "training" or "validation" (the `group`), steps, metrics_json (an
// object).
Result<bus::TrialReport> MetricsReportOf(const std::string& body);
// POST /api/v1/checkpoints: uuid, metadata.steps_completed, resources (sizes sent as decimal
// text become numbers) and metadata as JSON text; state COMPLETED.
Result<storage::CheckpointRecord> CheckpointOf(const std::string& body);
// POST /api/v1/checkpoints/{uuid}/metadata: the new metadata (a JSON object) as text, at most
// kCheckpointMetadataLimit bytes.
inline constexpr size_t kCheckpointMetadataLimit = 1 << 20;
Result<std::string> CheckpointMetadataOf(const std::string& body);
// POST .../early_exit (kind "exit", reason ERRORED, INVALID_HP or USER_CANCELED) and
// .../progress (kind "progress").
Result<bus::TrialReport> EarlyExitReportOf(const std::string& body);
Result<bus::TrialReport> ProgressReportOf(const std::string& body);
// POST /api/v1/allocations/{id}/rendezvous.
struct RendezvousRequest {
  RendezvousArrival arrival;
  int num_containers = 0;
  // Which meeting of the allocation: "" for trial code's (det_harness's rendezvous()), "launch"
  // for the launcher's, which fills rendezvous.json before the entrypoint starts.
  std::string phase;
};
Result<RendezvousRequest> RendezvousRequestOf(const std::string& body);
// Determined's PatchCheckpointsRequest: what is left of each checkpoint ("{}": nothing).
struct CheckpointPatch {
  std::string uuid;
  std::string resources_json;  // {path: size}
};
Result<std::vector<CheckpointPatch>> CheckpointPatchesOf(const std::string& body);

class TrialRoutes {
 public:
  // `front`'s parts outlive the routes (users, and the reads runs share with them).
  TrialRoutes(zmq::context_t& context, storage::DbConfig db, AllocationTokens tokens,
              DistributedTrainingConfig distributed, FrontDoor& front);
  ~TrialRoutes();

  // Adds the Core API's routes, the harness module and openapi.json to `router`.
  void Route(Router& router);
  // Answers parked long polls told to stop or out of time, and fails rendezvous out of time.
  // From one thread (the wing's housekeeping), every few tens of milliseconds.
  void Tick();
  size_t parked_polls() const { return board_.waiting(); }

  // Checkpoint `uuid` as a model version keeps it: its v1Checkpoint as `user` reads it, and its
  // experiment's stored config (keys included) as {"config": text}. COMPLETED ones only
  // (FailedPrecondition naming the state); NotFound; the user must see the experiment.
  Result<storage::RegisteredCheckpoint> CheckpointToRegister(const auth::Principal& user,
                                                             const std::string& uuid);

 private:
  void RouteReports(Router& router);
  void RouteAllocations(Router& router);
  void RouteRunBookkeeping(Router& router);  // run_routes.cc
  void RouteRunMetadata(Router& router);
  void RouteCheckpointDownload(Router& router);  // checkpoint_download.cc
  // The stream of GET /checkpoints/{uuid} for a logged-in user; the error to answer instead.
  Result<std::shared_ptr<BodySource>> CheckpointDownload(const Request& req,
                                                         const std::string& uuid);
  // Who asks a route that both trial code and users call: a run (Determined's
  // Grpc-Metadata-x-allocation-token header), reading as a user without rights of its own and
  // only its own trial or experiment `id` (PermissionDenied otherwise), or a logged-in user
  // (Authorization: Bearer).
  enum class OwnScope { kTrial, kExperiment };
  struct Asker {
    auth::Principal principal;
    std::optional<TrialRun> run;
  };
  Result<Asker> AskerOf(const Request& req, OwnScope scope, int64_t id);
  // Checkpoint `uuid` as {"checkpoint": v1Checkpoint} for whoever asks: a run (its experiment's
  // only) or a user (any, in detail: experiment_routes.h DetailedCheckpoints).
  // A model version's checkpoint when its experiment is gone.
  Result<nlohmann::ordered_json> CheckpointFor(const Request& req, const std::string& uuid);
  // Checkpoint `uuid` in detail (v1Checkpoint) as `user` reads it; NotFound.
  Result<nlohmann::ordered_json> UserCheckpoint(const auth::Principal& user,
                                                const std::string& uuid);
  // The stored config to read checkpoint `uuid`'s files by (its experiment's, or as a model
  // version keeps it once the experiment is gone), for a user who may see it.
  Result<std::string> DownloadableConfig(const auth::Principal& user, const std::string& uuid);
  // The run the request's `Authorization: Bearer <allocation token>` speaks for (trial_id 0: any).
  Result<TrialRun> Caller(const Request& req, int64_t trial_id);

  FrontDoor& front_;
  TrialReports reports_;
  DistributedTrainingConfig distributed_;
  Rendezvous rendezvous_;
  PreemptionBoard board_;
  // Checkpoint downloads under way (each holds its read-ahead's threads and pieces, about 20 MiB);
  // shared with the streams, which may outlive a call.
  std::shared_ptr<std::atomic<int>> downloads_ = std::make_shared<std::atomic<int>>(0);
};

}  // namespace det::master::http
