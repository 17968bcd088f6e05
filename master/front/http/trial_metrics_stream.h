#pragma once

#include "master/front/front_door.h"
#include "master/front/http/router.h"

namespace det::master::http {

// Determined's metric streams, as its SDK's `trial.iter_metrics(group)` reads them:
//
//   GET /api/v1/trials/metrics/trial_metrics?trialIds=1&trialIds=2&group=validation
//   GET /api/v1/trials/training_metrics?trialIds=...    (group training)
//   GET /api/v1/trials/validation_metrics?trialIds=...  (group validation)
//
// NDJSON of {"result": {"metrics": [v1MetricsReport]}}: each trial's reports by step ({"id",
// "trialId", "trialRunId", "totalBatches", "endTime", "group", "archived", "metrics":
// {"validation_metrics" | "avg_metrics": {...}}}), page by page, and the new ones as they come
// until every trial has ended. Users' tokens; 404 names an unknown trial, 400 a bad group.
void RouteTrialMetricsStreams(Router& routes, FrontDoor& front);

}  // namespace det::master::http
