// fake-docker: the fake Docker Engine (tests/fakes/fake_docker.h) as a process, for the docker
// CLI check and the agent's docker runtime tests.
#include <CLI/CLI.hpp>
#include <csignal>
#include <iostream>
#include <thread>

#include "tests/fakes/fake_docker.h"

namespace {
volatile std::sig_atomic_t stop_requested = 0;
void RequestStop(int) { stop_requested = 1; }
}  // namespace

int main(int argc, char** argv) {
  det::testing::FakeDockerOptions options;
  std::string socket;
  std::vector<std::string> private_images;
  int pull_delay_ms = 10;
  CLI::App app{"fake Docker Engine API on a unix socket, for tests"};
  app.add_option("--socket", socket, "the unix socket to serve on")->required();
  app.add_option("--image", options.images, "an image present from the start (repeatable)");
  app.add_option("--pullable", options.pullable, "an image its registry serves (repeatable)");
  app.add_option("--private", private_images,
                 "NAME=user:password: an image pulled only with those credentials (repeatable)");
  app.add_option("--api-version", options.api_version, "the newest API version it speaks");
  app.add_option("--min-api-version", options.min_api_version, "the oldest it accepts");
  app.add_option("--pull-delay-ms", pull_delay_ms, "between pull progress lines");
  CLI11_PARSE(app, argc, argv);
  for (const std::string& entry : private_images) {
    const size_t eq = entry.find('=');
    if (eq == std::string::npos) {
      std::cerr << "--private " << entry << ": expected NAME=user:password\n";
      return 2;
    }
    options.private_images[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  options.pull_delay = std::chrono::milliseconds(pull_delay_ms);
  std::signal(SIGTERM, RequestStop);
  std::signal(SIGINT, RequestStop);
  std::signal(SIGPIPE, SIG_IGN);
  det::testing::FakeDocker fake(options);
  fake.Start(socket);
  std::cout << "fake-docker listening on " << socket << std::endl;
  while (stop_requested == 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  fake.Stop();
  return 0;
}
