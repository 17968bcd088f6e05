#include "master/experiment_api.h"

#include <httplib.h>

#include <nlohmann/json.hpp>

#include "bus/catalog/experiments.h"
#include "bus/catalog/experiments_json.h"
#include "master/experiment_service.h"
#include "master/http_json.h"
#include "master/user_http.h"

namespace det::master {
namespace {

using nlohmann::json;
using Answer = Result<nlohmann::ordered_json>;
using nlohmann::ordered_json;

// The experiment service's answer to `request`.
template <class Req, class Rep>
Result<Rep> Ask(zmq::context_t& context, const Req& request) {
  return ExperimentService::Ask<Req, Rep>(context, request, std::chrono::seconds(30));
}

Result<bus::ExperimentCreateRequest> CreateRequestOf(const httplib::Request& req) {
  DET_ASSIGN_OR_RETURN(json body, ParseBody(req));
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
  return create;
}

}  // namespace

void RouteExperimentApi(httplib::Server& server, zmq::context_t& context, auth::Users& users) {
  // Every handler: for logged-in users (user_http.h), `answer`'s JSON or its error.
  auto route = [&users](auto answer) {
    return ForUsers(users, [answer](const auth::Principal&, const httplib::Request& req) {
      return Answer(answer(req));
    });
  };
  auto id_of = [](const httplib::Request& req) { return std::stoll(req.matches[1].str()); };
  zmq::context_t* ctx = &context;

  server.Post("/api/v1/experiments", route([ctx](const httplib::Request& req) -> Answer {
                DET_ASSIGN_OR_RETURN(bus::ExperimentCreateRequest create, CreateRequestOf(req));
                DET_ASSIGN_OR_RETURN(
                    auto reply,
                    (Ask<bus::ExperimentCreateRequest, bus::ExperimentCreateReply>(*ctx, create)));
                return ordered_json{{"id", reply.id}};
              }));
  server.Get("/api/v1/experiments", route([ctx](const httplib::Request&) -> Answer {
               DET_ASSIGN_OR_RETURN(
                   auto list, (Ask<bus::ExperimentListRequest, bus::ExperimentList>(*ctx, {})));
               ordered_json all = ordered_json::array();
               for (const auto& e : list.experiments) all.push_back(bus::ToJson(e));
               return ordered_json{{"experiments", all}};
             }));
  server.Get(R"(/api/v1/experiments/(\d{1,18}))",
             route([ctx, id_of](const httplib::Request& req) -> Answer {
               DET_ASSIGN_OR_RETURN(
                   auto reply,
                   (Ask<bus::ExperimentGetRequest, bus::ExperimentGetReply>(*ctx, {id_of(req)})));
               return bus::ToJson(reply);
             }));
  auto act = [ctx](int64_t id, const std::string& action) -> Answer {
    DET_ASSIGN_OR_RETURN(auto reply, (Ask<bus::ExperimentActionRequest, bus::ExperimentActionReply>(
                                         *ctx, {id, action})));
    return ordered_json{{"state", reply.state}};
  };
  server.Post(R"(/api/v1/experiments/(\d{1,18})/(pause|activate|cancel|kill))",
              route([act, id_of](const httplib::Request& req) {
                return act(id_of(req), req.matches[2].str());
              }));
  server.Delete(
      R"(/api/v1/experiments/(\d{1,18}))",
      route([act, id_of](const httplib::Request& req) { return act(id_of(req), "delete"); }));
  server.Get(R"(/api/v1/trials/(\d{1,18}))",
             route([ctx, id_of](const httplib::Request& req) -> Answer {
               DET_ASSIGN_OR_RETURN(
                   auto reply, (Ask<bus::TrialGetRequest, bus::TrialGetReply>(*ctx, {id_of(req)})));
               return ordered_json{{"trial", bus::ToJson(reply.trial)}};
             }));
}

}  // namespace det::master
