#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "master/front/answer_cache.h"
#include "master/front/front_door.h"
#include "master/front/http/router.h"

namespace det::master::http {

// The user REST API for experiments and trials in Determined's paths and shapes
// (experiment_shapes.h):
//
//   POST   /api/v1/experiments  {"config": "<YAML>" (or a JSON object), "modelDefinition":
//                               [{"path", "type", "content" (base64), "mode", "mtime"}],
//                               "activate", "projectId", "validateOnly"} -> {"experiment",
//                               "config", "warnings"}; a bad config is a 400 naming every bad
//                               field
//   GET    /api/v1/experiments[?states=&name=&labels=&offset=&limit=] -> {"experiments",
//                               "pagination"}, newest first
//   GET    /api/v1/experiments/{id}             -> {"experiment", "config", "trials"}
//   GET    /api/v1/experiments/{id}/trials      -> {"trials", "pagination"}
//   GET    /api/v1/experiments/{id}/checkpoints -> {"checkpoints", "pagination"}
//   GET    /api/v1/experiments/{id}/model_def   -> {"b64Tgz"}
//   GET    /api/v1/experiments/{id}/file_tree   -> {"files": [v1FileNode]}
//   POST   /api/v1/experiments/{id}/{pause|activate|cancel|kill}  -> {"state": "STATE_..."}
//   DELETE /api/v1/experiments/{id}             -> {"state": "STATE_DELETING"}
//   GET    /api/v1/trials/{id}/checkpoints      -> {"checkpoints", "pagination"}
//   GET    /api/v1/trials/{id}/workloads        -> {"workloads", "pagination"}
//   GET    /api/v1/trials/{id}/logs             Determined's TrialLogs stream
//
// Every call needs a user's token (user_routes.h).
// `cache` (may be null: every answer live) answers the experiment list without filters;
// CacheExperimentAnswers adds its entry.
void RouteExperimentApi(Router& routes, FrontDoor& front, AnswerCache* cache);
void CacheExperimentAnswers(AnswerCache& cache, FrontDoor& front);

// POST /api/v1/experiments' body as its handler reads it (exposed for tests and the fuzzer): the
// config as YAML text (a JSON object is YAML too), Determined's modelDefinition packed as the
// tar.gz this master keeps, and whether to start it (activate: false leaves it PAUSED);
// InvalidArgument naming the field that is missing or malformed. The config itself is the
// experiment service's to check (experiment_config.h). Never throws.
struct ExperimentCreate {
  bus::ExperimentCreateRequest request;
  bool activate = true;
};
Result<ExperimentCreate> ExperimentCreateRequestOf(const std::string& body);

// The experiment's checkpoints as Determined's v1Checkpoint, each with its trial's hparams, the
// validation at its step (validationMetrics, searcherMetric) and the experiment's config (what
// Determined's SDK downloads and sorts by); in the order given.
Result<std::vector<nlohmann::ordered_json>> DetailedCheckpoints(
    FrontDoor& front, const auth::Principal& caller, const bus::ExperimentGetReply& experiment,
    const std::vector<bus::CheckpointSummary>& checkpoints);

}  // namespace det::master::http
