// libFuzzer target for EC2's XML answers as the EC2 client reads them: the instances of
// RunInstances and DescribeInstances (reservations, pages), the spot requests of
// RequestSpotInstances and DescribeSpotInstanceRequests, the ids of TerminateInstances and
// CancelSpotInstanceRequests, and error documents; each reader is given the whole input. Bad
// answers must come back as errors or empty fields: a crash, a sanitizer report or an exception
// that escapes is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "cloud_aws/ec2_client.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string body(reinterpret_cast<const char*>(data), size);
  using namespace det::aws;
  for (const char* action : {"RunInstances", "DescribeInstances"}) {
    auto page = ReadInstancesAnswer(action, body);
    if (page.ok()) {
      for (const Ec2Instance& instance : page.value().items) (void)instance.Tag("Name");
    } else {
      (void)page.error().ToString();
    }
  }
  for (const char* action : {"RequestSpotInstances", "DescribeSpotInstanceRequests"}) {
    auto page = ReadSpotRequestsAnswer(action, body);
    if (page.ok()) {
      for (const SpotRequest& request : page.value().items) (void)request.Tag("Name");
    }
  }
  for (const char* action : {"TerminateInstances", "CancelSpotInstanceRequests"}) {
    (void)ReadIdsAnswer(action, body);
  }
  (void)ReadEc2Error("RunInstances", body.size() % 2 == 0 ? 400 : 503, body).ToString();
  return 0;
}
