// fake-s3: the fake S3 REST API (tests/fakes/fake_s3.h) as a process, for the `aws` CLI checks,
// the checkpoint-storage tests and the checkpoint benchmark.
#include <CLI/CLI.hpp>
#include <csignal>
#include <fstream>
#include <iostream>
#include <thread>

#include "tests/fakes/fake_s3.h"

namespace {
volatile std::sig_atomic_t stop_requested = 0;
void RequestStop(int) { stop_requested = 1; }
}  // namespace

int main(int argc, char** argv) {
  det::testing::FakeS3Options options;
  int port = 0;
  std::string port_file;
  std::string data_dir;
  std::vector<std::string> buckets;
  CLI::App app{"fake S3 REST API for tests"};
  app.add_option("--port", port, "TCP port (0: any)");
  app.add_option("--host", options.host, "address to listen on (default 127.0.0.1)");
  app.add_option("--port-file", port_file, "write the port here once listening");
  app.add_option("--access-key-id", options.access_key_id, "the access key it accepts");
  app.add_option("--secret-access-key", options.secret_access_key, "that key's secret");
  app.add_option("--region", options.region, "the endpoint's region");
  app.add_option("--data-dir", data_dir, "where objects' bytes are kept (default: a temp folder)");
  app.add_option("--virtual-host-suffix", options.virtual_host_suffix,
                 "serve virtual-host-style requests to BUCKET.<suffix> too");
  app.add_option("--page-size", options.page_size, "the most keys a list page holds");
  app.add_option("--bucket", buckets, "a bucket to create at start (repeatable)");
  CLI11_PARSE(app, argc, argv);
  options.data_dir = data_dir;
  std::signal(SIGTERM, RequestStop);
  std::signal(SIGINT, RequestStop);
  det::testing::FakeS3 fake(options);
  for (const std::string& bucket : buckets) fake.CreateBucket(bucket);
  fake.Start(port);
  if (!port_file.empty()) {
    std::ofstream(port_file + ".tmp") << fake.port() << "\n";
    std::rename((port_file + ".tmp").c_str(), port_file.c_str());
  }
  std::cout << "fake-s3 listening on " << options.host << ":" << fake.port() << std::endl;
  while (stop_requested == 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  fake.Stop();
  return 0;
}
