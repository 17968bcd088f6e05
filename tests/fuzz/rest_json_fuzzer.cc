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
#include "master/cluster_api.h"
#include "master/core_api.h"
#include "master/experiment/experiment_config.h"
#include "master/experiment_api.h"
#include "master/http_json.h"
#include "master/user_http.h"

namespace {

void DecodeUserBodies(const std::string& body) {
  (void)det::master::LoginRequestOf(body);
  (void)det::master::UserCreateRequestOf(body);
  (void)det::master::PasswordRequestOf("someone", body);
  (void)det::master::UserUpdateRequestOf("someone", body);
  (void)det::master::TokenCreateRequestOf(body);
}

void DecodeClusterBodies(const std::string& body) {
  (void)det::master::CommandRunRequestOf(body);
  (void)det::master::JobUpdateRequestOf("job-1", body);
  (void)det::master::AgentEnableRequestOf("agent-1", false, body);
}

void DecodeExperimentBody(const std::string& body) {
  auto create = det::master::ExperimentCreateRequestOf(body);
  if (!create.ok()) return;
  auto doc = det::ParseYaml(create->config_yaml, "config");
  if (doc.ok()) (void)det::master::experiment::ParseExperimentConfig(*doc);
}

void DecodeCoreBodies(const std::string& body) {
  (void)det::master::MetricsReportOf(body);
  (void)det::master::CheckpointOf(body);
  (void)det::master::EarlyExitReportOf(body);
  (void)det::master::ProgressReportOf(body);
  (void)det::master::RendezvousRequestOf(body);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string body(reinterpret_cast<const char*>(data), size);
  // Most inputs are not JSON objects: every decoder starts with ParseJsonObject, so once is
  // enough for those.
  if (!det::master::ParseJsonObject(body).ok()) return 0;
  DecodeUserBodies(body);
  DecodeClusterBodies(body);
  DecodeExperimentBody(body);
  DecodeCoreBodies(body);
  return 0;
}
