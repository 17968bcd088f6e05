// fake-gce: the fake Compute Engine, Cloud Storage, token endpoint and metadata server
// (tests/fakes/fake_gce.h) as a process, for the `gcloud` checks and the autoscaler's end-to-end
// tests. It writes the service account's key file (token_uri pointing at itself) to --key-file.
#include <CLI/CLI.hpp>
#include <csignal>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "tests/fakes/fake_gce.h"

namespace {
volatile std::sig_atomic_t stop_requested = 0;
void RequestStop(int) { stop_requested = 1; }
}  // namespace

int main(int argc, char** argv) {
  det::testing::FakeGceOptions options;
  int port = 0;
  std::string port_file;
  std::string key_file;
  std::string work_dir = "/tmp/fake-gce";
  int operation_delay_ms = 100;
  int boot_delay_ms = 200;
  int token_ttl_s = 3600;
  std::string gcs_data_dir;
  std::vector<std::string> gcs_buckets;
  CLI::App app{
      "fake Compute Engine, Cloud Storage, OAuth 2.0 token endpoint and metadata server for tests"};
  app.add_option("--port", port, "TCP port on 127.0.0.1 (0: any)");
  app.add_option("--port-file", port_file, "write the port here once listening");
  app.add_option("--key-file", key_file, "write the service account's key file here");
  app.add_option("--project", options.project, "the project it serves");
  app.add_option("--zone", options.zone, "the zone it serves");
  app.add_flag("--boot", options.boot_startup_script, "run each instance's startup-script");
  app.add_option("--work-dir", work_dir, "instances' folders when booting");
  app.add_option("--operation-delay-ms", operation_delay_ms, "how long operations run");
  app.add_option("--boot-delay-ms", boot_delay_ms, "how long instances stay STAGING");
  app.add_option("--token-ttl-s", token_ttl_s, "lifetime of the access tokens it issues");
  app.add_option("--gcs-data-dir", gcs_data_dir,
                 "where Cloud Storage objects' bytes are kept (default: a temp folder)");
  app.add_option("--gcs-page-size", options.gcs_page_size,
                 "the most items and prefixes an objects.list page holds (default 1000)");
  app.add_flag("--gcs-allow-anonymous", options.gcs_allow_anonymous,
               "let Cloud Storage calls without an Authorization header in");
  app.add_option("--gcs-bucket", gcs_buckets,
                 "a Cloud Storage bucket to create at start (repeatable)");
  CLI11_PARSE(app, argc, argv);
  options.work_dir = work_dir;
  options.gcs_data_dir = gcs_data_dir;
  options.operation_delay = std::chrono::milliseconds(operation_delay_ms);
  options.boot_delay = std::chrono::milliseconds(boot_delay_ms);
  options.token_ttl = std::chrono::seconds(token_ttl_s);
  std::signal(SIGTERM, RequestStop);
  std::signal(SIGINT, RequestStop);
  det::testing::FakeGce fake(options);
  for (const std::string& bucket : gcs_buckets) fake.CreateBucket(bucket);
  fake.Start(port);
  if (!key_file.empty()) fake.WriteServiceAccountKey(key_file);
  if (!port_file.empty()) {
    std::ofstream(port_file + ".tmp") << fake.port() << "\n";
    std::rename((port_file + ".tmp").c_str(), port_file.c_str());
  }
  std::cout << "fake-gce listening on 127.0.0.1:" << fake.port() << std::endl;
  while (stop_requested == 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  fake.Stop();
  return 0;
}
