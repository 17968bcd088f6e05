#include "master/front/http/server.h"

#include <spdlog/spdlog.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core/error.hpp>
#include <thread>
#include <vector>

#include "bus/socket.h"
#include "common/retry.h"
#include "common/thread_name.h"
#include "master/front/http/server_state.h"

namespace det::master::http {

namespace tcp = boost::asio::ip;

ServerState::ServerState(const Router& router_in, ServerOptions options_in)
    : router(router_in), options(std::move(options_in)), files(options.webui_dir) {}

bool ServerState::Admit(const std::string& peer, std::string* why) {
  std::lock_guard lock(mu_);
  const int64_t now_open = open.load();
  if (now_open >= limits().max_connections) {
    *why = "the master has " + std::to_string(now_open) +
           " connections open (http.max_connections): try again";
    return false;
  }
  int& from_peer = per_peer_[peer];
  if (from_peer >= limits().max_connections_per_peer) {
    *why = std::to_string(from_peer) + " connections are open from " + peer +
           " (http.max_connections_per_peer): close some and try again";
    return false;
  }
  ++from_peer;
  ++open;
  return true;
}

void ServerState::Release(const std::string& peer) {
  std::lock_guard lock(mu_);
  auto it = per_peer_.find(peer);
  if (it != per_peer_.end() && --it->second <= 0) per_peer_.erase(it);
  --open;
}

void ServerState::WarnLimited(const std::string& kind, const std::string& line) {
  {
    std::lock_guard lock(mu_);
    Quiet& quiet = quiet_[kind];
    const MonoTime now = RealClock::Instance().Now();
    if (now - quiet.last < std::chrono::seconds(10)) {
      ++quiet.left_out;
      return;
    }
    quiet.last = now;
    if (quiet.left_out > 0) {
      spdlog::warn("{} ({} more like it in the last 10 s)", line, quiet.left_out);
      quiet.left_out = 0;
      return;
    }
  }
  spdlog::warn("{}", line);
}

struct HttpServer::Impl {
  Impl(const Router& router, ServerOptions options)
      : state(router, std::move(options)), acceptor(state.io), retry(state.io) {}

  void Accept() {
    acceptor.async_accept(boost::asio::make_strand(state.io),
                          [this](boost::beast::error_code ec, tcp::tcp::socket socket) {
                            if (ec == boost::asio::error::operation_aborted) return;
                            if (ec) return AcceptLater(ec);  // out of descriptors, say
                            OnAccept(std::move(socket));
                            Accept();
                          });
  }

  // A failed accept (EMFILE, ENFILE) is tried again in 100 ms rather than in a busy loop.
  void AcceptLater(boost::beast::error_code ec) {
    state.WarnLimited("accept", "http: cannot accept a connection: " + ec.message());
    retry.expires_after(std::chrono::milliseconds(100));
    retry.async_wait([this](boost::beast::error_code wait) {
      if (!wait) Accept();
    });
  }

  void OnAccept(tcp::tcp::socket socket) {
    boost::beast::error_code ec;
    const auto remote = socket.remote_endpoint(ec);
    const std::string peer = ec ? "?" : remote.address().to_string();
    std::string refusal;
    if (!state.Admit(peer, &refusal)) {
      ++state.refused;
      state.WarnLimited("refused", "http: refused a connection from " + peer + ": " + refusal);
      if (++state.refusing > 1024) {  // answering refusals must not pile up either
        --state.refusing;
        return;  // closed as `socket` goes
      }
    }
    if (state.ssl) {
      StartTlsSession(state, std::move(socket), peer, refusal);
    } else {
      StartPlainSession(state, std::move(socket), peer, refusal);
    }
  }

  ServerState state;
  tcp::tcp::acceptor acceptor;
  boost::asio::steady_timer retry;
  std::vector<std::thread> threads;
  bool stopped = false;
};

HttpServer::HttpServer(const Router& router, ServerOptions options)
    : impl_(std::make_unique<Impl>(router, std::move(options))) {}

HttpServer::~HttpServer() { Stop(); }

Result<int> HttpServer::Bind(const std::string& host, int port) {
  ServerState& state = impl_->state;
  if (!state.options.tls_cert.empty()) {
    try {
      state.ssl =
          std::make_unique<boost::asio::ssl::context>(boost::asio::ssl::context::tls_server);
      state.ssl->set_options(
          boost::asio::ssl::context::default_workarounds | boost::asio::ssl::context::no_sslv2 |
          boost::asio::ssl::context::no_sslv3 | boost::asio::ssl::context::no_tlsv1 |
          boost::asio::ssl::context::no_tlsv1_1);
      state.ssl->use_certificate_chain_file(state.options.tls_cert);
      state.ssl->use_private_key_file(state.options.tls_key, boost::asio::ssl::context::pem);
    } catch (const std::exception&) {
      return InvalidArgument("security.tls: cannot use the certificate " + state.options.tls_cert +
                             " with the key " + state.options.tls_key +
                             " (PEM files that belong together?)");
    }
  }
  boost::beast::error_code ec;
  const auto address = tcp::make_address(host, ec);
  if (ec) return InvalidArgument("http: " + host + " is not an IP address");
  const tcp::tcp::endpoint endpoint(address, static_cast<uint16_t>(port));
  auto& acceptor = impl_->acceptor;
  auto listen = [&]() -> bool {
    boost::beast::error_code e;
    if (acceptor.is_open()) acceptor.close(e);
    acceptor.open(endpoint.protocol(), e);
    if (!e) acceptor.set_option(boost::asio::socket_base::reuse_address(true), e);
    if (!e) acceptor.bind(endpoint, e);
    if (!e) acceptor.listen(boost::asio::socket_base::max_listen_connections, e);
    return !e;
  };
  // A port still held is tried again for a while, as the bus's ports are (bus::kBindRetryFor).
  const bool bound = port == 0 ? listen()
                               : RetryEvery(std::chrono::milliseconds(200), bus::kBindRetryFor,
                                            RealClock::Instance(), listen);
  if (!bound) {
    return Unavailable("port: cannot listen on " + host + ":" + std::to_string(port));
  }
  return static_cast<int>(acceptor.local_endpoint().port());
}

void HttpServer::Start() {
  ServerState& state = impl_->state;
  state.workers = std::make_unique<ThreadPool>(state.limits().workers, "http-worker");
  impl_->Accept();
  impl_->threads.emplace_back([this] {
    NameThisThread("http-io");
    impl_->state.io.run();
  });
}

void HttpServer::Stop() {
  if (impl_->stopped) return;
  impl_->stopped = true;
  impl_->state.io.stop();
  for (std::thread& thread : impl_->threads) thread.join();
  impl_->threads.clear();
  impl_->state.workers.reset();  // runs what is queued; their answers go nowhere
}

HttpServer::Stats HttpServer::stats() const {
  const ServerState& state = impl_->state;
  return {state.open.load(), state.refused.load(), state.timed_out.load(), state.parked.load(),
          state.waiting.load()};
}

}  // namespace det::master::http
