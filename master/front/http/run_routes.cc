// What Determined's library asks of the master beyond reports (core_routes.cc): its trial, the
// experiment's best validation, run metadata, the runner's state, and checkpoints it deleted.
// Several of these are also for users; a run reads only its own trial and experiment.

#include <nlohmann/json.hpp>

#include "bus/catalog/experiments.h"
#include "bus/catalog/experiments_json.h"
#include "master/front/http/core_routes.h"
#include "master/front/http/experiment_shapes.h"
#include "master/front/http/json.h"
#include "master/front/http/user_routes.h"

namespace det::master::http {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

// The best value of `metric` among the trials' best validations, or NotFound (Determined answers
// 404 before the first validation; its library reads that as "none yet").
Result<double> BestSearcherValidation(const bus::ExperimentGetReply& experiment) {
  const std::string& metric = experiment.experiment.metric;
  std::optional<double> best;
  for (const bus::TrialSummary& trial : experiment.trials) {
    const json validation = json::parse(trial.best_validation_json, nullptr, false);
    if (!validation.is_object() || !validation.contains(metric) ||
        !validation[metric].is_number()) {
      continue;
    }
    const double value = validation[metric].get<double>();
    if (!best || (experiment.experiment.smaller_is_better ? value < *best : value > *best)) {
      best = value;
    }
  }
  if (!best) {
    return NotFound("experiment " + std::to_string(experiment.experiment.id) +
                    " has no validation of its metric " + metric + " yet");
  }
  return *best;
}

}  // namespace

// Determined's PatchCheckpointsRequest: {"checkpoints": [{"uuid", "resources": {"resources":
// {path: size} | null}}]}: each checkpoint's resources that are left ({} or null: none).
Result<std::vector<CheckpointPatch>> CheckpointPatchesOf(const std::string& text) {
  DET_ASSIGN_OR_RETURN(json body, ParseJsonObject(text));
  if (!body.contains("checkpoints") || !body["checkpoints"].is_array()) {
    return InvalidArgument("checkpoints: expected a list of {\"uuid\", \"resources\"}");
  }
  std::vector<CheckpointPatch> patches;
  for (const json& patch : body["checkpoints"]) {
    if (!patch.is_object()) return InvalidArgument("checkpoints: each must be a JSON object");
    DET_ASSIGN_OR_RETURN(std::string uuid, Field<std::string>(patch, "uuid", "a UUID"));
    json left = json::object();
    if (patch.contains("resources") && patch["resources"].is_object()) {
      const json& wrapper = patch["resources"];
      if (wrapper.contains("resources") && !wrapper["resources"].is_null())
        left = wrapper["resources"];
    }
    if (!left.is_object()) {
      return InvalidArgument("checkpoints[].resources.resources: expected {path: size in bytes}");
    }
    for (auto& [path, size] : left.items()) {
      if (!DecimalTextToNumber(size)) {
        return InvalidArgument("checkpoints[].resources.resources[\"" + path +
                               "\"]: expected a size in bytes");
      }
    }
    patches.push_back({std::move(uuid), left.dump()});
  }
  return patches;
}

Result<TrialRoutes::Asker> TrialRoutes::AskerOf(const Request& req, OwnScope scope, int64_t id) {
  if (req.Header("Grpc-Metadata-x-allocation-token").empty()) {
    DET_ASSIGN_OR_RETURN(auth::Principal user, UserOf(front_.calls.users(), req));
    return Asker{user, std::nullopt};
  }
  DET_ASSIGN_OR_RETURN(TrialRun run, Caller(req, 0));
  const bool trial = scope == OwnScope::kTrial;
  const int64_t own = trial ? run.trial_id : run.experiment_id;
  if (own != id) {
    return PermissionDenied(std::string("a trial's run reads only its own ") +
                            (trial ? "trial, " : "experiment, ") + std::to_string(own));
  }
  // A run reads as nobody in particular: what any logged-in user may read.
  return Asker{auth::Principal{0, "trial " + std::to_string(run.trial_id), false}, run};
}

void TrialRoutes::RouteRunBookkeeping(Router& router) {
  auto id_of = [](const Request& req) { return std::stoll(req.Match(1)); };
  router.Get("/api/v1/trials/{trial_id}", [=, this](const Request& req, Response& res) {
    Reply(res, [&]() -> Result<ordered_json> {
      const int64_t trial_id = id_of(req);
      DET_ASSIGN_OR_RETURN(Asker asker, AskerOf(req, OwnScope::kTrial, trial_id));
      DET_ASSIGN_OR_RETURN(auto reply,
                           front_.calls.Call(asker.principal, bus::TrialGetRequest{trial_id}));
      return ordered_json{{"trial", TrialJson(reply.trial)}};
    }());
  });
  router.Get("/api/v1/experiments/{experiment_id}/searcher/best_searcher_validation_metric",
             [=, this](const Request& req, Response& res) {
               Reply(res, [&]() -> Result<json> {
                 const int64_t experiment_id = id_of(req);
                 DET_ASSIGN_OR_RETURN(Asker asker,
                                      AskerOf(req, OwnScope::kExperiment, experiment_id));
                 DET_ASSIGN_OR_RETURN(
                     auto experiment,
                     front_.calls.Call(asker.principal, bus::ExperimentGetRequest{experiment_id}));
                 DET_ASSIGN_OR_RETURN(double best, BestSearcherValidation(experiment));
                 return json{{"metric", best}};
               }());
             });
  // Determined's set_status: what the run is doing, shown with the trial.
  router.Post(
      "/api/v1/trials/{trial_id}/runner/metadata", [=, this](const Request& req, Response& res) {
        Reply(res, [&]() -> Result<json> {
          DET_ASSIGN_OR_RETURN(TrialRun run, Caller(req, id_of(req)));
          DET_ASSIGN_OR_RETURN(json body, ParseJsonObject(req.body));
          bus::TrialReport report{"", "runner_state"};
          DET_ASSIGN_OR_RETURN(report.reason, Field<std::string>(body, "state", "a short text"));
          if (report.reason.size() > 256) report.reason.resize(256);
          DET_RETURN_IF_ERROR(reports_.Tell(run, std::move(report)).status());
          return json::object();
        }());
      });
  RouteRunMetadata(router);
  router.Patch("/api/v1/checkpoints", [=, this](const Request& req, Response& res) {
    Reply(res, [&]() -> Result<json> {
      DET_ASSIGN_OR_RETURN(TrialRun run, Caller(req, 0));
      DET_ASSIGN_OR_RETURN(auto patches, CheckpointPatchesOf(req.body));
      for (const CheckpointPatch& patch : patches) {
        DET_RETURN_IF_ERROR(reports_.PatchCheckpoint(run, patch.uuid, patch.resources_json));
      }
      return json::object();
    }());
  });
}

void TrialRoutes::RouteRunMetadata(Router& router) {
  auto id_of = [](const Request& req) { return std::stoll(req.Match(1)); };
  // Determined's run metadata: written by the run itself, read by it and by users.
  router.Post("/api/v1/runs/{run_id}/metadata", [=, this](const Request& req, Response& res) {
    Reply(res, [&]() -> Result<json> {
      DET_ASSIGN_OR_RETURN(TrialRun run, Caller(req, id_of(req)));
      DET_ASSIGN_OR_RETURN(json body, ParseJsonObject(req.body));
      if (!body.contains("metadata") || !body["metadata"].is_object()) {
        return InvalidArgument("metadata: expected a JSON object");
      }
      DET_RETURN_IF_ERROR(reports_.SetRunMetadata(run, body["metadata"].dump()));
      return json{{"metadata", body["metadata"]}};
    }());
  });
  router.Get("/api/v1/runs/{run_id}/metadata", [=, this](const Request& req, Response& res) {
    Reply(res, [&]() -> Result<json> {
      const int64_t trial_id = id_of(req);
      DET_RETURN_IF_ERROR(AskerOf(req, OwnScope::kTrial, trial_id).status());
      DET_ASSIGN_OR_RETURN(std::string metadata, reports_.RunMetadata(trial_id));
      return json{{"metadata", json::parse(metadata, nullptr, false)}};
    }());
  });
}

}  // namespace det::master::http
