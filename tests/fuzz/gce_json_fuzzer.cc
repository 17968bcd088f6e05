// libFuzzer target for what Google's services answer and what credential files hold, as the GCP
// provider reads them: Compute Engine's instances, pages of instances, operations (with their
// errors) and error documents; OAuth 2.0 token responses (the token endpoint's and the metadata
// server's); service account key files, and the JWT assertion signed with such a key; RFC 3339
// times. Each reader is given the whole input. Bad answers must come back as errors or empty
// fields: a crash, a sanitizer report or an exception that escapes is a finding.
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "cloud_gcp/compute_client.h"
#include "cloud_gcp/credentials.h"

namespace {

const det::SimulatedClock& Clock() {
  static const det::SimulatedClock clock;
  return clock;
}

// A 2xx answer: the client reads only JSON objects (anything else is MalformedResponse).
void ReadComputeAnswer(const std::string& body) {
  const nlohmann::json json = nlohmann::json::parse(body, nullptr, false);
  if (!json.is_object()) return;
  (void)det::gcp::ReadGceInstance(json);
  (void)det::gcp::ReadGceInstancePage(json);
  det::gcp::GceOperation operation = det::gcp::ReadGceOperation(json, "instances.insert");
  if (operation.error) (void)operation.error->ToString();
}

// The HTTP status of a failed answer: the input's size picks one, so that each is reached
// without parsing every input once per status.
long FailedStatus(const std::string& body) {
  constexpr long kStatuses[] = {400, 401, 403, 404, 429, 500, 503};
  return kStatuses[body.size() % std::size(kStatuses)];
}

void ReadFailedAnswer(const std::string& body) {
  (void)det::gcp::ReadGceError("instances.insert", {FailedStatus(body), {}, body}).ToString();
}

void ReadTokenAnswer(const std::string& body) {
  const det::WallTime now = Clock().WallNow();
  for (long status : {200L, FailedStatus(body)}) {
    (void)det::gcp::ReadTokenResponse(det::HttpResponse{status, {}, body}, "the token endpoint",
                                      now);
  }
}

void ReadKeyFile(const std::string& text) {
  auto key = det::gcp::ParseServiceAccountKey(text);
  if (!key.ok()) return;
  det::gcp::ServiceAccountTokenSource source(*key, "key file fuzz.json", Clock());
  (void)source.Assertion(Clock().WallNow());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string body(reinterpret_cast<const char*>(data), size);
  ReadComputeAnswer(body);
  ReadFailedAnswer(body);
  ReadTokenAnswer(body);
  ReadKeyFile(body);
  (void)det::gcp::ParseRfc3339(body);
  return 0;
}
