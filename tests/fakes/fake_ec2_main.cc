// fake-ec2: the fake EC2 Query API and IMDSv2 (tests/fakes/fake_ec2.h) as a process, for the
// `aws` CLI checks and the autoscaler's end-to-end tests.
#include <CLI/CLI.hpp>
#include <csignal>
#include <fstream>
#include <iostream>
#include <thread>

#include "tests/fakes/fake_ec2.h"

namespace {
volatile std::sig_atomic_t stop_requested = 0;
void RequestStop(int) { stop_requested = 1; }
}  // namespace

int main(int argc, char** argv) {
  det::testing::FakeEc2Options options;
  int port = 0;
  std::string port_file;
  std::string work_dir = "/tmp/fake-ec2";
  int boot_delay_ms = 200;
  CLI::App app{"fake EC2 Query API and IMDSv2 for tests"};
  app.add_option("--port", port, "TCP port (0: any)");
  app.add_option("--host", options.host, "address to listen on (default 127.0.0.1)");
  app.add_option("--boot-wrapper", options.boot_wrapper,
                 "argv each boot runs under, given the instance id and `bash SCRIPT` after it");
  app.add_option("--port-file", port_file, "write the port here once listening");
  app.add_option("--access-key-id", options.access_key_id, "the access key it accepts");
  app.add_option("--secret-access-key", options.secret_access_key, "that key's secret");
  app.add_option("--region", options.region, "region of the identity document");
  app.add_option("--zone", options.zone, "availability zone of new instances");
  app.add_flag("--boot", options.boot_user_data, "run each instance's user data with bash");
  app.add_option("--work-dir", work_dir, "instances' folders when booting");
  app.add_option("--boot-delay-ms", boot_delay_ms, "how long instances stay pending");
  CLI11_PARSE(app, argc, argv);
  options.work_dir = work_dir;
  options.boot_delay = std::chrono::milliseconds(boot_delay_ms);
  std::signal(SIGTERM, RequestStop);
  std::signal(SIGINT, RequestStop);
  det::testing::FakeEc2 fake(options);
  fake.Start(port);
  if (!port_file.empty()) {
    std::ofstream(port_file + ".tmp") << fake.port() << "\n";
    std::rename((port_file + ".tmp").c_str(), port_file.c_str());
  }
  std::cout << "fake-ec2 listening on " << options.host << ":" << fake.port() << std::endl;
  while (stop_requested == 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  fake.Stop();
  return 0;
}
