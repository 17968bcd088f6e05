#include "master/front/http/experiment_routes.h"

#include <algorithm>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "bus/catalog/experiments.h"
#include "common/base64.h"
#include "master/experiments/experiment/experiment.h"
#include "master/experiments/model_files.h"
#include "master/front/answer_cache.h"
#include "master/front/http/cluster_shapes.h"
#include "master/front/http/experiment_shapes.h"
#include "master/front/http/json.h"
#include "master/front/http/metric_series_routes.h"
#include "master/front/http/task_log_stream.h"
#include "master/front/http/user_routes.h"
#include "master/front/recent_answers.h"

namespace det::master::http {
namespace {

using nlohmann::json;
using Answer = Result<nlohmann::ordered_json>;
using nlohmann::ordered_json;

// Determined's GetExperiments filters: ?states=STATE_ACTIVE&states=... (or ACTIVE,PAUSED),
// name=, labels= (or label=), users= (owners' names, repeated), offset=, limit=.
Result<bus::ExperimentListRequest> ListRequestOf(const Request& req) {
  bus::ExperimentListRequest request;
  for (std::string state : QueryList(req, "states")) {
    if (state.starts_with("STATE_")) state.erase(0, 6);
    request.states.push_back(state);
  }
  request.name = req.Param("name");
  request.label = req.HasParam("labels") ? req.Param("labels") : req.Param("label");
  request.owners = QueryList(req, "users");  // Determined's CLI lists the caller's: users=NAME
  DET_ASSIGN_OR_RETURN(int64_t offset, QueryOffset(req));
  DET_ASSIGN_OR_RETURN(int64_t limit, QueryNumber(req, "limit", 0));
  request.offset = static_cast<int32_t>(std::clamp<int64_t>(offset, -(1 << 30), 1 << 30));
  request.limit = static_cast<int32_t>(std::min<int64_t>(limit, 1 << 30));
  return request;
}

constexpr const char* kExperimentsAnswer = "experiments";
// How long a list answered for a query is shared with others asking the same, and how much of
// them is kept.
constexpr Duration kListMaxAge = std::chrono::seconds(1);
constexpr size_t kListMaxBytes = 32 << 20;

// One key per distinct list query.
std::string ListKeyOf(const bus::ExperimentListRequest& request) {
  std::string key;
  for (const auto& state : request.states) key += state + ",";
  key += "|";
  for (const auto& owner : request.owners) key += owner + ",";
  return key + "|" + request.name + "|" + request.label + "|" + std::to_string(request.offset) +
         "|" + std::to_string(request.limit);
}

ordered_json ExperimentsJson(const bus::ExperimentListRequest& request,
                             const bus::ExperimentList& list) {
  ordered_json all = ordered_json::array();
  for (const auto& e : list.experiments) all.push_back(ExperimentJson(e));
  Page page;
  page.offset = request.offset;
  page.limit = request.limit;
  page.total = static_cast<size_t>(list.total);
  page.start = static_cast<size_t>(request.offset);
  page.end = page.start + list.experiments.size();
  return ordered_json{{"experiments", std::move(all)}, {"pagination", PaginationJson(page)}};
}

// Determined's modelDefinition: [{"path", "type" (the tar type flag's code: '0' 48 a file, '5' 53
// a folder), "content" (base64), "mode", "mtime" (Unix seconds as text), "uid", "gid"}].
Result<std::vector<experiments::ModelFile>> ModelFilesOf(const json& list) {
  if (!list.is_array()) return InvalidArgument("modelDefinition: expected a list of files");
  std::vector<experiments::ModelFile> files;
  for (const json& item : list) {
    if (!item.is_object()) return InvalidArgument("modelDefinition: each file must be an object");
    experiments::ModelFile file;
    DET_ASSIGN_OR_RETURN(file.path, Field<std::string>(item, "path", "the file's relative path"));
    const json type = item.value("type", json(int{'0'}));
    if (type == int{'5'}) {
      file.is_dir = true;
    } else if (type != int{'0'} && type != 0) {
      return InvalidArgument("modelDefinition: \"" + file.path + "\" is of tar type " +
                             type.dump() +
                             ": only files ('0', 48) and folders ('5', 53) are taken");
    }
    if (!file.is_dir && item.contains("content") && !item["content"].is_null()) {
      DET_ASSIGN_OR_RETURN(std::string encoded,
                           Field<std::string>(item, "content", "the file's bytes in base64"));
      DET_ASSIGN_OR_RETURN(file.content,
                           DecodeBase64(encoded, "modelDefinition[\"" + file.path + "\"]"));
    }
    if (item.contains("mode") && item["mode"].is_number_integer()) {
      file.mode = static_cast<uint32_t>(item["mode"].get<int64_t>() & 07777);
    } else {
      file.mode = file.is_dir ? 0755 : 0644;
    }
    json mtime = item.value("mtime", json(0));
    if (DecimalTextToNumber(mtime)) file.mtime = mtime.get<int64_t>();
    files.push_back(std::move(file));
  }
  return files;
}

// {"experiment": v1Experiment, "config", "warnings"}: what CreateExperiment answers.
// Determined's `warnings` of a launch are LaunchWarning enum values, which its clients decode
// strictly (any other text fails the call): the config's warnings go beside them as text.
void AddWarnings(ordered_json& answer, const std::vector<std::string>& config_warnings) {
  answer["warnings"] = ordered_json::array();
  answer["configWarnings"] = config_warnings;
}

Answer CreatedJson(FrontDoor& front, const auth::Principal& caller,
                   const bus::ExperimentCreateReply& reply, const std::string& config_yaml) {
  ordered_json answer;
  if (reply.id == 0) {  // validateOnly: nothing was made
    bus::ExperimentSummary checked;
    answer = {{"experiment", ExperimentJson(checked, config_yaml)},
              {"config", ordered_json::object()}};
  } else {
    DET_ASSIGN_OR_RETURN(auto got, front.calls.Call(caller, bus::ExperimentGetRequest{reply.id}));
    ordered_json experiment = ExperimentJson(got.experiment, got.config_yaml);
    ordered_json config = experiment["config"];
    answer = {{"experiment", std::move(experiment)}, {"config", std::move(config)}};
  }
  AddWarnings(answer, reply.warnings);
  return answer;
}

// Determined's ContinueExperimentRequest: {id, overrideConfig (YAML text)}.
Result<bus::ExperimentContinueRequest> ContinueRequestOf(const std::string& text) {
  DET_ASSIGN_OR_RETURN(json body, ParseJsonObject(text));
  bus::ExperimentContinueRequest request;
  DET_ASSIGN_OR_RETURN(request.id, Field<int64_t>(body, "id", "an experiment id"));
  if (body.contains("overrideConfig") && !body["overrideConfig"].is_null()) {
    if (!body["overrideConfig"].is_string()) {
      return InvalidArgument("overrideConfig: expected config fields as YAML text");
    }
    request.override_config_yaml = body["overrideConfig"].get<std::string>();
  }
  return request;
}

}  // namespace

Result<std::vector<ordered_json>> DetailedCheckpoints(
    FrontDoor& front, const auth::Principal& caller, const bus::ExperimentGetReply& experiment,
    const std::vector<bus::CheckpointSummary>& checkpoints) {
  // Each trial's validations by step.
  std::map<int64_t, std::map<int64_t, ordered_json>> validations;
  for (const auto& c : checkpoints) {
    if (validations.count(c.trial_id)) continue;
    auto& by_step = validations[c.trial_id];
    DET_ASSIGN_OR_RETURN(auto reports, front.reads.MetricReports(caller, c.trial_id, "validation"));
    for (const auto& m : reports) {
      by_step[m.step] = ordered_json::parse(m.metrics_json, nullptr, /*allow_exceptions=*/false);
    }
  }
  const ordered_json config =
      ordered_json::parse(experiment.experiment.config_json, nullptr, /*allow_exceptions=*/false);
  std::vector<ordered_json> all;
  for (const auto& c : checkpoints) {
    ordered_json json = CheckpointJson(c);
    json["training"]["experimentConfig"] = config.is_discarded() ? ordered_json::object() : config;
    json["training"]["hparams"] = ordered_json::object();
    for (const auto& trial : experiment.trials) {
      if (trial.id == c.trial_id) {
        json["training"]["hparams"] = ordered_json::parse(trial.hparams_json, nullptr, false);
      }
    }
    const auto& by_step = validations[c.trial_id];
    if (auto v = by_step.find(c.steps_completed); v != by_step.end() && v->second.is_object()) {
      json["training"]["validationMetrics"] = {{"avgMetrics", v->second}};
      if (v->second.contains(experiment.experiment.metric)) {
        json["training"]["searcherMetric"] = v->second[experiment.experiment.metric];
      }
    }
    all.push_back(std::move(json));
  }
  return all;
}

namespace {

// {"checkpoints": [v1Checkpoint], "pagination"} of one experiment's checkpoints, each with its
// trial's validation at its step and the experiment's config (what Determined's SDK downloads
// from). Sorted as Determined's GetExperimentCheckpoints asks: ?sortByAttr=SORT_BY_BATCH_NUMBER
// (the default here), SORT_BY_SEARCHER_METRIC (best first unless ?orderBy says), SORT_BY_UUID,
// SORT_BY_TRIAL_ID, SORT_BY_END_TIME, or ?sortByMetric=NAME; ?states=STATE_COMPLETED (repeated);
// ?offset=&limit=.
Answer CheckpointsJson(FrontDoor& front, const auth::Principal& caller, const Request& req,
                       int64_t experiment_id, std::vector<bus::CheckpointSummary> checkpoints) {
  DET_ASSIGN_OR_RETURN(int64_t offset, QueryOffset(req));
  DET_ASSIGN_OR_RETURN(int64_t limit, QueryNumber(req, "limit", 0));
  DET_ASSIGN_OR_RETURN(auto experiment,
                       front.calls.Call(caller, bus::ExperimentGetRequest{experiment_id}));
  const std::vector<std::string> states = QueryList(req, "states");
  if (!states.empty()) {
    std::erase_if(checkpoints, [&](const auto& c) {
      return std::find(states.begin(), states.end(), "STATE_" + c.state) == states.end();
    });
  }
  DET_ASSIGN_OR_RETURN(std::vector<ordered_json> all,
                       DetailedCheckpoints(front, caller, experiment, checkpoints));
  // What to sort by: a validation metric (with the experiment's direction by default), or an
  // attribute.
  const std::string attribute = req.Param("sortByAttr");
  std::string metric = req.Param("sortByMetric");
  if (attribute == "SORT_BY_SEARCHER_METRIC") metric = experiment.experiment.metric;
  const std::string order = req.Param("orderBy");
  const bool descending = order.empty() || order == "ORDER_BY_UNSPECIFIED"
                              ? (!metric.empty() && !experiment.experiment.smaller_is_better)
                              : order == "ORDER_BY_DESC";
  auto key = [&](const ordered_json& c) -> std::pair<bool, ordered_json> {
    if (!metric.empty()) {
      const ordered_json& values = c["training"]["validationMetrics"]["avgMetrics"];
      const bool has = values.is_object() && values.contains(metric) && values[metric].is_number();
      return {has, has ? values[metric] : ordered_json()};  // those without it go last
    }
    if (attribute == "SORT_BY_UUID") return {true, c["uuid"]};
    if (attribute == "SORT_BY_TRIAL_ID") return {true, c["training"]["trialId"]};
    if (attribute == "SORT_BY_END_TIME") return {true, c["reportTime"]};
    return {true, c["stepsCompleted"]};
  };
  std::stable_sort(all.begin(), all.end(), [&](const ordered_json& a, const ordered_json& b) {
    const auto [a_has, a_value] = key(a);
    const auto [b_has, b_value] = key(b);
    if (a_has != b_has) return a_has;
    return descending ? b_value < a_value : a_value < b_value;
  });
  const Page page = PageOf(offset, limit, all.size());
  ordered_json listed = ordered_json::array();
  for (size_t i = page.start; i < page.end; ++i) listed.push_back(std::move(all[i]));
  return ordered_json{{"checkpoints", std::move(listed)}, {"pagination", PaginationJson(page)}};
}

// GetModelDefTree's v1FileNode tree: {path, name, isDir, contentLength, modifiedTime, files}.
// A file whose folder the archive does not list goes under the top.
ordered_json FileTreeJson(const std::vector<experiments::ModelFile>& files) {
  std::map<std::string, std::vector<size_t>> children;  // folder path ("": the top) -> files
  std::set<std::string> folders;
  for (const auto& file : files) {
    if (file.is_dir) folders.insert(file.path);
  }
  for (size_t i = 0; i < files.size(); ++i) {
    const size_t slash = files[i].path.rfind('/');
    std::string parent = slash == std::string::npos ? "" : files[i].path.substr(0, slash);
    if (!folders.count(parent)) parent.clear();
    children[parent].push_back(i);
  }
  std::function<ordered_json(const std::string&, int)> nodes = [&](const std::string& folder,
                                                                   int depth) {
    ordered_json list = ordered_json::array();
    if (depth > 64) return list;  // no deeper: a path of 64 folders is no model definition
    for (size_t i : children[folder]) {
      const auto& file = files[i];
      const size_t slash = file.path.rfind('/');
      list.push_back(
          {{"path", file.path},
           {"name", slash == std::string::npos ? file.path : file.path.substr(slash + 1)},
           {"isDir", file.is_dir},
           {"contentLength", file.size},
           {"modifiedTime", TimeText(file.mtime * 1'000'000'000)},
           {"contentType", file.is_dir ? "" : "text/plain"},
           {"files", file.is_dir ? nodes(file.path, depth + 1) : ordered_json::array()}});
    }
    return list;
  };
  return nodes("", 0);
}

Result<bus::TrialSummary> TrialOf(FrontDoor& front, const auth::Principal& caller, int64_t id) {
  DET_ASSIGN_OR_RETURN(auto reply, front.calls.Call(caller, bus::TrialGetRequest{id}));
  return reply.trial;
}

// One of a trial's workloads (GetTrialWorkloads' v1WorkloadContainer) and its step.
struct Workload {
  int64_t step = 0;
  ordered_json json;
};

// Its training and validation reports and its checkpoints, by step.
Result<std::vector<Workload>> WorkloadsOf(FrontDoor& front, const auth::Principal& caller,
                                          const bus::TrialSummary& trial) {
  std::vector<Workload> all;
  for (const char* kind : {"training", "validation"}) {
    DET_ASSIGN_OR_RETURN(auto reports, front.reads.MetricReports(caller, trial.id, kind));
    for (const auto& m : reports) {
      ordered_json workload = MetricsWorkloadJson(m.step, m.metrics_json);
      workload["endTime"] = TimeText(m.reported_at);
      all.push_back({m.step, {{kind, std::move(workload)}}});
    }
  }
  DET_ASSIGN_OR_RETURN(auto checkpoints, front.reads.Checkpoints(caller, {trial.experiment_id}));
  for (const auto& c : checkpoints.checkpoints) {
    if (c.trial_id != trial.id) continue;
    ordered_json checkpoint = CheckpointJson(c);
    all.push_back({c.steps_completed,
                   {{"checkpoint",
                     {{"uuid", c.uuid},
                      {"state", checkpoint["state"]},
                      {"totalBatches", c.steps_completed},
                      {"endTime", checkpoint["reportTime"]},
                      {"resources", checkpoint["resources"]},
                      {"metadata", checkpoint["metadata"]}}}}});
  }
  std::stable_sort(all.begin(), all.end(),
                   [](const Workload& a, const Workload& b) { return a.step < b.step; });
  return all;
}

}  // namespace

void CacheExperimentAnswers(AnswerCache& cache, FrontDoor& front) {
  // The experiment service publishes no events: trials' task states stand in for its changes,
  // and the cache's max_age bounds the rest (progress, metrics).
  const auth::Principal reader{0, "answer-cache", false};
  cache.Add(kExperimentsAnswer, {"task."}, [&front, reader]() -> Result<std::string> {
    const bus::ExperimentListRequest request;
    DET_ASSIGN_OR_RETURN(auto list, front.calls.Call(reader, request));
    front.reads.FillCheckpointTotals(list.experiments);
    return ExperimentsJson(request, list).dump();
  });
}

Result<ExperimentCreate> ExperimentCreateRequestOf(const std::string& text) {
  DET_ASSIGN_OR_RETURN(json body, ParseJsonObject(text));
  ExperimentCreate create;
  bus::ExperimentCreateRequest& request = create.request;
  if (!body.contains("config")) {
    return InvalidArgument("config: is required (the experiment YAML as text, or a JSON object)");
  }
  if (body["config"].is_string()) {
    request.config_yaml = body["config"].get<std::string>();
  } else if (body["config"].is_object()) {
    request.config_yaml = body["config"].dump();  // JSON is YAML
  } else {
    return InvalidArgument("config: expected the experiment YAML as text, or a JSON object");
  }
  if (body.contains("modelDefinition") && !body["modelDefinition"].is_null()) {
    DET_ASSIGN_OR_RETURN(auto files, ModelFilesOf(body["modelDefinition"]));
    DET_ASSIGN_OR_RETURN(
        request.model_definition.data,
        experiments::PackModelFiles(files, bus::ExperimentCreateRequest::kMaxModelDefinitionBytes));
  }
  if (body.contains("parentId") && !body["parentId"].is_null() && body["parentId"] != 0) {
    return InvalidArgument("parentId: forking an experiment is not served yet");
  }
  if (body.contains("projectId") && !body["projectId"].is_null() && body["projectId"] != 0 &&
      body["projectId"] != 1) {
    return NotFound("projectId: project " + body["projectId"].dump() +
                    " not found (only the default, 1 \"Uncategorized\", exists)");
  }
  if (body.contains("activate") && !body["activate"].is_null()) {
    DET_ASSIGN_OR_RETURN(create.activate, Field<bool>(body, "activate", "true or false"));
  }
  // Determined's CreateExperimentRequest.validateOnly: check, create nothing.
  if (body.contains("validateOnly") && !body["validateOnly"].is_null()) {
    DET_ASSIGN_OR_RETURN(request.dry_run, Field<bool>(body, "validateOnly", "true or false"));
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
  routes.Post(
      "/api/v1/experiments", route([&front](Caller caller, Req req) -> Answer {
        DET_ASSIGN_OR_RETURN(ExperimentCreate create, ExperimentCreateRequestOf(req.body));
        DET_ASSIGN_OR_RETURN(auto reply, front.calls.Call(caller, create.request));
        if (!create.activate && reply.id != 0) {
          DET_RETURN_IF_ERROR(
              front.calls.Call(caller, bus::ExperimentActionRequest{reply.id, "pause"}).status());
        }
        return CreatedJson(front, caller, reply, create.request.config_yaml);
      }),
      {.body_limit = kCreateBodyLimit});
  routes.Post(
      "/api/v1/experiments/continue", route([&front](Caller caller, Req req) -> Answer {
        DET_ASSIGN_OR_RETURN(auto request, ContinueRequestOf(req.body));
        DET_ASSIGN_OR_RETURN(auto reply, front.calls.Call(caller, request));
        DET_ASSIGN_OR_RETURN(auto got,
                             front.calls.Call(caller, bus::ExperimentGetRequest{request.id}));
        front.reads.FillCheckpointTotals({&got.experiment, 1});
        ordered_json answer{{"experiment", ExperimentJson(got.experiment, got.config_yaml)}};
        AddWarnings(answer, reply.warnings);
        return answer;
      }));
  // The list reads the same for every user: without a query it is the answer cache's; with one
  // (Determined's CLI and SDK always send one: ?limit=...), pollers asking the same share one
  // read per kListMaxAge.
  auto recent = std::make_shared<RecentAnswers>(kListMaxAge, kListMaxBytes);
  routes.Get("/api/v1/experiments", [&front, cache, recent](Req req, Response& res) {
    Result<auth::Principal> caller = UserOf(front.calls.users(), req);
    if (!caller.ok()) return Reply(res, caller.status());
    if (cache != nullptr && req.params.empty()) {
      if (Result<AnswerCache::Json> cached = cache->Get(kExperimentsAnswer); cached.ok()) {
        return res.SetContent(**cached, "application/json");
      }
    }
    Result<bus::ExperimentListRequest> request = ListRequestOf(req);
    if (!request.ok()) return Reply(res, request.status());
    auto answer = recent->Get(ListKeyOf(*request), [&]() -> Result<std::string> {
      DET_ASSIGN_OR_RETURN(auto list, front.calls.Call(*caller, *request));
      front.reads.FillCheckpointTotals(list.experiments);
      return ExperimentsJson(*request, list).dump();
    });
    if (!answer.ok()) return Reply(res, answer.status());
    res.SetContent(**answer, "application/json");
  });
  routes.Get("/api/v1/experiments/{experiment_id}",
             route([&front, id_of](Caller caller, Req req) -> Answer {
               DET_ASSIGN_OR_RETURN(
                   auto reply, front.calls.Call(caller, bus::ExperimentGetRequest{id_of(req)}));
               front.reads.FillCheckpointTotals({&reply.experiment, 1});
               ordered_json experiment = ExperimentJson(reply.experiment, reply.config_yaml);
               ordered_json config = experiment["config"];
               ordered_json trials = ordered_json::array();
               for (const auto& trial : reply.trials) trials.push_back(TrialJson(trial));
               return ordered_json{{"experiment", std::move(experiment)},
                                   {"config", std::move(config)},
                                   {"jobSummary", nullptr},
                                   {"trials", std::move(trials)}};
             }));
  routes.Get(
      "/api/v1/experiments/{experiment_id}/trials",
      route([&front, id_of](Caller caller, Req req) -> Answer {
        DET_ASSIGN_OR_RETURN(auto reply,
                             front.calls.Call(caller, bus::ExperimentGetRequest{id_of(req)}));
        DET_ASSIGN_OR_RETURN(int64_t offset, QueryOffset(req));
        DET_ASSIGN_OR_RETURN(int64_t limit, QueryNumber(req, "limit", 0));
        const Page page = PageOf(offset, limit, reply.trials.size());
        ordered_json trials = ordered_json::array();
        for (size_t i = page.start; i < page.end; ++i) {
          trials.push_back(TrialJson(reply.trials[i]));
        }
        return ordered_json{{"trials", std::move(trials)}, {"pagination", PaginationJson(page)}};
      }));
  routes.Get("/api/v1/experiments/{experiment_id}/checkpoints",
             route([&front, id_of](Caller caller, Req req) -> Answer {
               DET_ASSIGN_OR_RETURN(auto list, front.reads.Checkpoints(caller, {id_of(req)}));
               return CheckpointsJson(front, caller, req, id_of(req), list.checkpoints);
             }));
  routes.Get("/api/v1/experiments/{experiment_id}/model_def",
             route([&front, id_of](Caller caller, Req req) -> Answer {
               DET_ASSIGN_OR_RETURN(std::string archive,
                                    front.reads.ModelDefinition(caller, id_of(req)));
               return ordered_json{{"b64Tgz", Base64Encode(archive)}};
             }));
  routes.Get("/api/v1/experiments/{experiment_id}/file_tree",
             route([&front, id_of](Caller caller, Req req) -> Answer {
               DET_ASSIGN_OR_RETURN(std::string archive,
                                    front.reads.ModelDefinition(caller, id_of(req)));
               if (archive.empty()) return ordered_json{{"files", ordered_json::array()}};
               DET_ASSIGN_OR_RETURN(auto files, experiments::ReadModelFiles(archive, false));
               return ordered_json{{"files", FileTreeJson(files)}};
             }));
  auto act = [&front](Caller caller, int64_t id, const std::string& action) -> Answer {
    DET_ASSIGN_OR_RETURN(auto reply,
                         front.calls.Call(caller, bus::ExperimentActionRequest{id, action}));
    return ordered_json{{"state", "STATE_" + reply.state}};
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
  routes.Get("/api/v1/trials/{trial_id}/metrics",
             route([&front, id_of](Caller caller, Req req) -> Answer {
               bus::TrialMetricsRequest request{id_of(req)};
               if (req.HasParam("kind")) request.kind = req.Param("kind");
               DET_ASSIGN_OR_RETURN(int64_t after, QueryNumber(req, "afterStep", 0));
               DET_ASSIGN_OR_RETURN(int64_t limit, QueryNumber(req, "limit", 1000));
               request.after_step = req.HasParam("afterStep") ? after : -1;
               request.limit = static_cast<int32_t>(std::min<int64_t>(limit, 1 << 30));
               DET_ASSIGN_OR_RETURN(request.max_points, QueryMaxPoints(req, 0));
               DET_ASSIGN_OR_RETURN(auto reply, front.reads.TrialMetrics(caller, request));
               ordered_json metrics = ordered_json::array();
               for (const auto& m : reply.metrics) {
                 metrics.push_back({{"step", m.step},
                                    {"runId", m.run_id},
                                    {"metrics", ordered_json::parse(m.metrics_json, nullptr,
                                                                    /*allow_exceptions=*/false)}});
               }
               return ordered_json{{"trialId", request.trial_id},
                                   {"kind", request.kind},
                                   {"metrics", metrics},
                                   {"downsampled", reply.downsampled}};
             }));
  routes.Get(
      "/api/v1/trials/{trial_id}/checkpoints",
      route([&front, id_of](Caller caller, Req req) -> Answer {
        DET_ASSIGN_OR_RETURN(bus::TrialSummary trial, TrialOf(front, caller, id_of(req)));
        DET_ASSIGN_OR_RETURN(auto list, front.reads.Checkpoints(caller, {trial.experiment_id}));
        std::erase_if(list.checkpoints, [&](const auto& c) { return c.trial_id != trial.id; });
        return CheckpointsJson(front, caller, req, trial.experiment_id, list.checkpoints);
      }));
  routes.Get("/api/v1/trials/{trial_id}/workloads",
             route([&front, id_of](Caller caller, Req req) -> Answer {
               DET_ASSIGN_OR_RETURN(bus::TrialSummary trial, TrialOf(front, caller, id_of(req)));
               DET_ASSIGN_OR_RETURN(std::vector<Workload> all, WorkloadsOf(front, caller, trial));
               DET_ASSIGN_OR_RETURN(int64_t offset, QueryOffset(req));
               DET_ASSIGN_OR_RETURN(int64_t limit, QueryNumber(req, "limit", 0));
               const Page page = PageOf(offset, limit, all.size());
               ordered_json workloads = ordered_json::array();
               for (size_t i = page.start; i < page.end; ++i) {
                 workloads.push_back(std::move(all[i].json));
               }
               return ordered_json{{"workloads", std::move(workloads)},
                                   {"pagination", PaginationJson(page)}};
             }));
  routes.Get("/api/v1/trials/{trial_id}/logs", [&front, id_of](Req req, Response& res) {
    auto start = [&]() -> Status {
      DET_ASSIGN_OR_RETURN(auth::Principal caller, UserOf(front.calls.users(), req));
      DET_ASSIGN_OR_RETURN(LogQuery query, LogQueryOf(req));
      const int64_t trial_id = id_of(req);
      DET_RETURN_IF_ERROR(TrialOf(front, caller, trial_id).status());  // 404 before the stream
      LogSource source{[&front, caller, trial_id]() -> Result<LogTasks> {
                         DET_ASSIGN_OR_RETURN(bus::TrialSummary trial,
                                              TrialOf(front, caller, trial_id));
                         LogTasks tasks;
                         for (int32_t run = 1; run <= trial.run_id; ++run) {
                           tasks.task_ids.push_back("trial-" + std::to_string(trial_id) + "-" +
                                                    std::to_string(run));
                         }
                         tasks.over = experiment::IsTerminal(trial.state);
                         return tasks;
                       },
                       [trial_id](const bus::TaskLogLine& line, const std::string& task) {
                         ordered_json json = TaskLogLineJson(line, task);
                         json["trialId"] = trial_id;
                         json["source"] = "trial";
                         return json;
                       }};
      res.Stream("application/x-ndjson",
                 LogStream(front, caller, std::move(query), std::move(source)));
      return Status::Ok();
    };
    if (Status started = start(); !started.ok()) Reply(res, started);
  });
  routes.Post("/api/v1/trials/{trial_id}/kill",
              route([&front, id_of](Caller caller, Req req) -> Answer {
                DET_ASSIGN_OR_RETURN(auto reply,
                                     front.calls.Call(caller, bus::TrialKillRequest{id_of(req)}));
                return ordered_json{{"trial", TrialJson(reply.trial)}};
              }));
  // Determined's DeleteCheckpoints: {"checkpointUuids": [...]} (`det checkpoint delete`, its
  // SDK's Checkpoint.delete): their files removed as garbage collection removes them, then
  // DELETED; none when one may not go (registered in a model, another's experiment, not
  // COMPLETED).
  routes.Delete(
      "/api/v1/checkpoints", route([&front](Caller caller, Req req) -> Answer {
        DET_ASSIGN_OR_RETURN(json body, ParseBody(req));
        DET_ASSIGN_OR_RETURN(
            std::vector<std::string> uuids,
            Field<std::vector<std::string>>(body, "checkpointUuids", "a list of checkpoint uuids"));
        DET_RETURN_IF_ERROR(front.calls.Call(caller, bus::CheckpointDeleteRequest{uuids}).status());
        return ordered_json::object();
      }));
}

}  // namespace det::master::http
