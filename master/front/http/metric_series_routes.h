#pragma once

#include "master/front/front_door.h"
#include "master/front/http/router.h"

namespace det::master::http {

// Many trials' curves at once, for charts that overlay them (RecordReads::MetricSeries):
//
//   GET /api/v1/experiments/{id}/metrics-series?group=validation&name=loss&maxPoints=200
//       -> {"experimentId", "group", "names": {"training": [...], "validation": [...]},
//           "series": [{"trialId", "name", "steps": [...], "values": [...], "downsampled"}],
//           "truncated"}
//       every trial of the experiment (`name` may repeat; none: only "names"); the same for
//       every user, so answers are shared for 2 s (RecentAnswers): pages polling one experiment
//       cost one read per 2 s however many are open;
//   GET /api/v1/trials/time-series?trialIds=1&trialIds=2&metricNames=loss&group=validation
//       &maxDatapoints=200
//       -> Determined's CompareTrials: {"trials": [{"trial": trialv1Trial, "metrics": [{"group",
//          "type", "data": [{"batches", "time", "values": {"loss": ...}}]}]}]} (up to 100
//          trials; metricType METRIC_TYPE_TRAINING | METRIC_TYPE_VALIDATION stands for group;
//          the parameters' proto names, trial_ids and so on, are read too, as Determined's
//          gateway reads them).
//
// Every call needs a user's token. Errors: Determined's error body with 400 (a bad group, count
// or number) or 404 (an unknown experiment or trial).
void RouteMetricSeries(Router& routes, FrontDoor& front);

// ?maxPoints= of a curve read: 2..storage::kMetricCurveMaxPoints, or `fallback` when absent;
// InvalidArgument naming it otherwise.
Result<int> QueryMaxPoints(const Request& req, int fallback);

}  // namespace det::master::http
