#include "master/front/http/experiment_routes.h"

#include <nlohmann/json.hpp>

#include "bus/catalog/experiments.h"
#include "bus/catalog/experiments_json.h"
#include "master/front/answer_cache.h"
#include "master/front/http/json.h"
#include "master/front/http/user_routes.h"

namespace det::master::http {
namespace {

using nlohmann::json;
using Answer = Result<nlohmann::ordered_json>;
using nlohmann::ordered_json;

// ?states=ACTIVE,PAUSED&name=&label=&offset=&limit= (Determined's filters; `states` may repeat).
Result<bus::ExperimentListRequest> ListRequestOf(const Request& req) {
  bus::ExperimentListRequest request;
  request.states = QueryList(req, "states");
  request.name = req.Param("name");
  request.label = req.Param("label");
  DET_ASSIGN_OR_RETURN(int64_t offset, QueryNumber(req, "offset", 0));
  DET_ASSIGN_OR_RETURN(int64_t limit, QueryNumber(req, "limit", 0));
  request.offset = static_cast<int32_t>(std::min<int64_t>(offset, 1 << 30));
  request.limit = static_cast<int32_t>(std::min<int64_t>(limit, 1 << 30));
  return request;
}

constexpr const char* kExperimentsAnswer = "experiments";

ordered_json ExperimentsJson(const bus::ExperimentListRequest& request,
                             const bus::ExperimentList& list) {
  ordered_json all = ordered_json::array();
  for (const auto& e : list.experiments) all.push_back(bus::ToJson(e));
  return ordered_json{
      {"experiments", all},
      {"pagination",
       {{"offset", request.offset}, {"limit", request.limit}, {"total", list.total}}}};
}

}  // namespace

void CacheExperimentAnswers(AnswerCache& cache, FrontDoor& front) {
  // The experiment service publishes no events: trials' task states stand in for its changes,
  // and the cache's max_age bounds the rest (progress, metrics).
  const auth::Principal reader{0, "answer-cache", false};
  cache.Add(kExperimentsAnswer, {"task."}, [&front, reader]() -> Result<std::string> {
    const bus::ExperimentListRequest request;
    DET_ASSIGN_OR_RETURN(auto list, front.calls.Call(reader, request));
    return ExperimentsJson(request, list).dump();
  });
}

Result<bus::ExperimentCreateRequest> ExperimentCreateRequestOf(const std::string& text) {
  DET_ASSIGN_OR_RETURN(json body, ParseJsonObject(text));
  bus::ExperimentCreateRequest create;
  if (!body.contains("config")) {
    return InvalidArgument("config: is required (the experiment YAML as text, or a JSON object)");
  }
  if (body["config"].is_string()) {
    create.config_yaml = body["config"].get<std::string>();
  } else if (body["config"].is_object()) {
    create.config_yaml = body["config"].dump();  // JSON is YAML
  } else {
    return InvalidArgument("config: expected the experiment YAML as text, or a JSON object");
  }
  if (body.contains("model_definition")) {
    DET_ASSIGN_OR_RETURN(std::string encoded,
                         Field<std::string>(body, "model_definition", "base64 of a tar.gz"));
    DET_ASSIGN_OR_RETURN(create.model_definition.data, DecodeBase64(encoded, "model_definition"));
  }
  // Determined's CreateExperimentRequest.validateOnly: check, create nothing.
  if (body.contains("validateOnly")) {
    DET_ASSIGN_OR_RETURN(create.dry_run, Field<bool>(body, "validateOnly", "true or false"));
  }
  return create;
}

void RouteExperimentApi(Router& routes, FrontDoor& front, AnswerCache* cache) {
  // Every handler: for logged-in users (user_routes.h), `answer`'s JSON or its error.
  auto route = [&front](auto answer) {
    return ForUsers(front.calls.users(),
                    [answer](const auth::Principal& caller, const Request& req) {
                      return Answer(answer(caller, req));
                    });
  };
  auto id_of = [](const Request& req) { return std::stoll(req.Match(1)); };
  using Caller = const auth::Principal&;
  using Req = const Request&;

  // The model definition comes base64-encoded: 4/3 of its limit, and the config beside it.
  constexpr size_t kCreateBodyLimit =
      bus::ExperimentCreateRequest::kMaxModelDefinitionBytes / 3 * 4 + (1 << 20);
  routes.Post("/api/v1/experiments", route([&front](Caller caller, Req req) -> Answer {
                DET_ASSIGN_OR_RETURN(bus::ExperimentCreateRequest create,
                                     ExperimentCreateRequestOf(req.body));
                DET_ASSIGN_OR_RETURN(auto reply, front.calls.Call(caller, create));
                return ordered_json{{"id", reply.id}, {"warnings", reply.warnings}};
              }),
              {.body_limit = kCreateBodyLimit});
  routes.Get("/api/v1/experiments",
             ForUsersCached(front.calls.users(), cache, kExperimentsAnswer,
                            [&front](Caller caller, Req req) -> Answer {
                              DET_ASSIGN_OR_RETURN(bus::ExperimentListRequest request,
                                                   ListRequestOf(req));
                              DET_ASSIGN_OR_RETURN(auto list, front.calls.Call(caller, request));
                              return ExperimentsJson(request, list);
                            }));
  routes.Get("/api/v1/experiments/{experiment_id}",
             route([&front, id_of](Caller caller, Req req) -> Answer {
               DET_ASSIGN_OR_RETURN(
                   auto reply, front.calls.Call(caller, bus::ExperimentGetRequest{id_of(req)}));
               return bus::ToJson(reply);
             }));
  routes.Get("/api/v1/experiments/{experiment_id}/checkpoints",
             route([&front, id_of](Caller caller, Req req) -> Answer {
               DET_ASSIGN_OR_RETURN(auto list, front.reads.Checkpoints(caller, {id_of(req)}));
               ordered_json all = ordered_json::array();
               for (const auto& c : list.checkpoints) all.push_back(bus::ToJson(c));
               return ordered_json{{"checkpoints", all}};
             }));
  auto act = [&front](Caller caller, int64_t id, const std::string& action) -> Answer {
    DET_ASSIGN_OR_RETURN(auto reply,
                         front.calls.Call(caller, bus::ExperimentActionRequest{id, action}));
    return ordered_json{{"state", reply.state}};
  };
  for (const char* action : {"pause", "activate", "cancel", "kill"}) {
    routes.Post("/api/v1/experiments/{experiment_id}/" + std::string(action),
                route([act, id_of, action](Caller caller, Req req) {
                  return act(caller, id_of(req), action);
                }));
  }
  routes.Delete("/api/v1/experiments/{experiment_id}", route([act, id_of](Caller caller, Req req) {
                  return act(caller, id_of(req), "delete");
                }));
  routes.Get(
      "/api/v1/trials/{trial_id}/metrics", route([&front, id_of](Caller caller, Req req) -> Answer {
        bus::TrialMetricsRequest request{id_of(req)};
        if (req.HasParam("kind")) request.kind = req.Param("kind");
        DET_ASSIGN_OR_RETURN(int64_t after, QueryNumber(req, "after_step", 0));
        DET_ASSIGN_OR_RETURN(int64_t limit, QueryNumber(req, "limit", 1000));
        request.after_step = req.HasParam("after_step") ? after : -1;
        request.limit = static_cast<int32_t>(std::min<int64_t>(limit, 1 << 30));
        DET_ASSIGN_OR_RETURN(int64_t max_points, QueryNumber(req, "max_points", 0));
        request.max_points = static_cast<int32_t>(std::clamp<int64_t>(max_points, -1, 1 << 30));
        DET_ASSIGN_OR_RETURN(auto reply, front.reads.TrialMetrics(caller, request));
        ordered_json metrics = ordered_json::array();
        for (const auto& m : reply.metrics) {
          metrics.push_back({{"step", m.step},
                             {"run_id", m.run_id},
                             {"metrics", ordered_json::parse(m.metrics_json, nullptr,
                                                             /*allow_exceptions=*/false)}});
        }
        return ordered_json{{"trial_id", request.trial_id},
                            {"kind", request.kind},
                            {"metrics", metrics},
                            {"downsampled", reply.downsampled}};
      }));
  routes.Post("/api/v1/trials/{trial_id}/kill",
              route([&front, id_of](Caller caller, Req req) -> Answer {
                DET_ASSIGN_OR_RETURN(auto reply,
                                     front.calls.Call(caller, bus::TrialKillRequest{id_of(req)}));
                return ordered_json{{"trial", bus::ToJson(reply.trial)}};
              }));
}

}  // namespace det::master::http
