#pragma once

#include "master/front/answer_cache.h"
#include "master/front/front_door.h"
#include "master/front/http/router.h"

namespace det::master::http {

// The user REST API for experiments and trials, with Determined's paths, answering what the
// experiment service answers `det`:
//
//   POST   /api/v1/experiments  {"config": "<YAML>" or {...}, "model_definition": "<base64
//   tar.gz>"}
//                               -> {"id": N}; a bad config is a 400 naming every bad field
//   GET    /api/v1/experiments                  -> {"experiments": [...]}, newest first
//   GET    /api/v1/experiments/{id}             -> {"experiment", "trials", "config"}
//   POST   /api/v1/experiments/{id}/{pause|activate|cancel|kill}  -> {"state": "..."}
//   DELETE /api/v1/experiments/{id}             -> {"state": "DELETING"}
//   GET    /api/v1/trials/{id}                  -> {"trial": {...}}
//
// Every call needs a user's token (user_routes.h). Errors: {"error": "..."} with 400, 401, 404, or
// 503 (the experiment service did not answer).
// `cache` (may be null: every answer live) answers the experiment list without filters;
// CacheExperimentAnswers adds its entry.
void RouteExperimentApi(Router& routes, FrontDoor& front, AnswerCache* cache);
void CacheExperimentAnswers(AnswerCache& cache, FrontDoor& front);

// POST /api/v1/experiments' body as its handler reads it (exposed for tests and the fuzzer): the
// config as YAML text (a JSON object is YAML too) and the decoded model definition; InvalidArgument
// naming the field that is missing or malformed. The config itself is the experiment service's to
// check (experiment_config.h). Never throws.
Result<bus::ExperimentCreateRequest> ExperimentCreateRequestOf(const std::string& body);

}  // namespace det::master::http
