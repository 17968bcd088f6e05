// libFuzzer target for the REST API's request bodies: every decoder that turns a body into a
// request (the user API's logins, users and tokens; the cluster API's commands, job updates and
// agent drains; experiments, whose config then goes through the experiment config parser as the
// experiment service reads it; the Core API's metrics, checkpoints, exits, progress and
// rendezvous), each given the whole input. Bad bodies must come back as errors: a crash, a
// sanitizer report or an exception that escapes is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/config.h"
#include "master/experiments/experiment/experiment_config.h"
#include "master/front/http/cluster_routes.h"
#include "master/front/http/command_routes.h"
#include "master/front/http/core_routes.h"
#include "master/front/http/experiment_routes.h"
#include "master/front/http/json.h"
#include "master/front/http/token_routes.h"
#include "master/front/http/user_routes.h"

namespace {

void DecodeUserBodies(const std::string& body) {
  (void)det::master::http::LoginRequestOf(body);
  (void)det::master::http::UserCreateRequestOf(body);
  (void)det::master::http::PasswordRequestOf("someone", body);
  (void)det::master::http::UserPatchOf("someone", body);
  (void)det::master::http::TokenCreateRequestOf(body);
  (void)det::master::http::TokenPatchRequestOf(1, body);
  (void)det::master::http::CheckpointMetadataOf(body);
}

void DecodeClusterBodies(const std::string& body) {
  (void)det::master::http::CommandRunRequestOf(body);
  (void)det::master::http::JobQueueUpdatesOf(body);
  (void)det::master::http::AgentEnableRequestOf("agent-1", false, body);
}

void DecodeExperimentBody(const std::string& body) {
  auto create = det::master::http::ExperimentCreateRequestOf(body);
  if (!create.ok()) return;
  auto doc = det::ParseYaml(create->request.config_yaml, "config");
  if (doc.ok()) (void)det::master::experiment::ParseExperimentConfig(*doc);
}

void DecodeCoreBodies(const std::string& body) {
  (void)det::master::http::MetricsReportOf(body);
  (void)det::master::http::CheckpointOf(body);
  (void)det::master::http::EarlyExitReportOf(body);
  (void)det::master::http::ProgressReportOf(body);
  (void)det::master::http::RendezvousRequestOf(body);
  (void)det::master::http::CheckpointPatchesOf(body);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string body(reinterpret_cast<const char*>(data), size);
  // Most inputs are not JSON objects: every decoder starts with ParseJsonObject, so once is
  // enough for those.
  if (!det::master::http::ParseJsonObject(body).ok()) return 0;
  DecodeUserBodies(body);
  DecodeClusterBodies(body);
  DecodeExperimentBody(body);
  DecodeCoreBodies(body);
  return 0;
}
