#pragma once

// Hollow agents (as Kubernetes' kubemark does): many simulated agents in one process, each a real
// AgentChannelClient with its own TCP connection to a real det-master, registering 8 slots in pool
// `default` and heartbeating every second.

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "bus/agent_channel_client.h"
#include "bus/catalog/agent.h"
#include "bus/socket.h"

namespace det::bench {

using namespace std::chrono_literals;

// The hollow agents, driven by a few threads. Agents marked silent stop talking.
class HollowAgents {
 public:
  static constexpr int kDriverThreads = 4;

  HollowAgents(int first, int n, int agent_port) : first_(first) {
    context_.set(zmq::ctxopt::max_sockets, n + 100);
    context_.set(zmq::ctxopt::io_threads, 2);
    bus::AgentChannelConfig config;
    config.silence_limit = 30s;  // the agents' side: never give up on the master here
    for (int i = 0; i < n; ++i) {
      clients_.push_back(std::make_unique<bus::AgentChannelClient>(
          context_, "hollow-" + std::to_string(first + i),
          bus::TcpEndpoint("127.0.0.1", agent_port), bus::SocketSecurity{}, RealClock::Instance(),
          config));
      silent_.push_back(std::make_unique<std::atomic<bool>>(false));
    }
    for (int t = 0; t < kDriverThreads; ++t) threads_.emplace_back([this, t] { Drive(t); });
  }
  ~HollowAgents() {
    stop_ = true;
    for (auto& thread : threads_) thread.join();
  }
  // Silences agent number `index` (counting from the first of all groups) if it is one of these.
  void Silence(int index) {
    if (index >= first_ && index - first_ < static_cast<int>(silent_.size())) {
      *silent_[index - first_] = true;
    }
  }

 private:
  void Drive(int t) {
    std::vector<size_t> mine;
    for (size_t i = t; i < clients_.size(); i += kDriverThreads) {
      if (clients_[i]->Start().ok()) mine.push_back(i);
    }
    std::vector<zmq::pollitem_t> items;
    std::vector<bus::AgentChannelClient::Event> events;
    while (!stop_) {
      items.clear();
      for (size_t i : mine) {
        zmq::socket_t* socket = clients_[i]->socket();
        items.push_back({socket ? socket->handle() : nullptr, -1, ZMQ_POLLIN, 0});
      }
      bus::Poll(items.data(), items.size(), 100ms);
      for (size_t k = 0; k < mine.size(); ++k) {
        const size_t i = mine[k];
        if (*silent_[i]) continue;
        events.clear();
        if (items[k].revents & ZMQ_POLLIN) clients_[i]->Receive(&events);
        clients_[i]->Tick(&events);
        for (const auto& event : events) {
          if (event.kind != bus::AgentChannelClient::Event::Kind::kConnected) continue;
          bus::AgentRegister registration{"hollow", "default", "hollow", {}, {}};
          for (int s = 0; s < 8; ++s) {
            registration.slots.push_back({"cpu" + std::to_string(s), "cpu", "hollow"});
          }
          clients_[i]->SendReliable(registration);
        }
      }
    }
  }

  int first_;
  zmq::context_t context_;
  std::vector<std::unique_ptr<bus::AgentChannelClient>> clients_;
  std::vector<std::unique_ptr<std::atomic<bool>>> silent_;
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

}  // namespace det::bench
