#pragma once

#include "master/front/front_door.h"
#include "master/front/http/router.h"

namespace det::master::http {

// Many trials' curves at once, for charts that overlay them (RecordReads::MetricSeries):
//
//   GET /api/v1/experiments/{id}/metrics-series?group=validation&name=loss&max_points=200
//       -> {"experiment_id", "group", "names": {"training": [...], "validation": [...]},
//           "series": [{"trial_id", "name", "steps": [...], "values": [...], "downsampled"}]}
//       every trial of the experiment (`name` may repeat; none: only "names"); the same for
//       every user, so answers are shared for 2 s (RecentAnswers): pages polling one experiment
//       cost one read per 2 s however many are open;
//   GET /api/v1/trials/time-series?trial_ids=1&trial_ids=2&metric_names=loss&group=validation
//       &max_datapoints=200
//       -> Determined's CompareTrials: {"trials": [{"trial": {...}, "metrics": [{"group",
//          "type", "data": [{"batches", "values": {"loss": ...}}]}]}]} (up to 100 trials;
//          metric_type METRIC_TYPE_TRAINING | METRIC_TYPE_VALIDATION stands for group).
//
// Every call needs a user's token. Errors: {"error": "..."} with 400 (a bad group, count or
// number) or 404 (an unknown experiment or trial).
void RouteMetricSeries(Router& routes, FrontDoor& front);

}  // namespace det::master::http
