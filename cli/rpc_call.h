#pragma once

// What every det command shares: one gateway call, and how failures end the process.

#include <ctime>
#include <iostream>
#include <optional>
#include <zmq.hpp>

#include "bus/rpc_client.h"
#include "cli/cli_client.h"
#include "cli/credentials.h"
#include "cli/master_trust.h"
#include "cli/relay.h"

namespace det::cli {

// Prints "error: <message>" and returns the exit code: 3 when the master is unreachable, else 1.
inline int Fail(const Status& status) {
  std::cerr << "error: " << status.message() << "\n";
  return status.code() == StatusCode::kUnavailable ? 3 : 1;
}

// A Unix-nanoseconds time as people read it: "2026-11-22 10:31:52Z" ("-" for 0).
inline std::string UtcTime(int64_t unix_ns) {
  if (unix_ns == 0) return "-";
  const auto seconds = static_cast<std::time_t>(unix_ns / 1'000'000'000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%SZ", &utc);
  return text;
}

// One call with the caller's token (credentials.h), through the user's relay to this master when
// one runs (relay.h); a cached session the master no longer knows is renewed once with DET_USER /
// DET_PASS when they are set.
// `config`: how long to wait and how often to try (a call that is not idempotent tries once).
template <class Req, class Rep>
Result<Rep> Call(const CliOptions& options, const Req& request, bus::RpcClientConfig config = {}) {
  auto security = ResolveCliSecurity(options);
  if (!security.ok()) return security.status();
  DET_ASSIGN_OR_RETURN(std::string token, ResolveToken(options));
  DET_ASSIGN_OR_RETURN(std::string gateway, GatewayEndpoint(options));
  std::optional<bus::RpcClient> client;  // the direct way, made only when no relay answers
  auto direct = [&](const bus::RpcClientConfig& attempts) -> bus::RpcClient& {
    if (!client) client.emplace(ClientContext(), gateway, *security, attempts);
    return *client;
  };
  const RelayTarget target{gateway, *security};
  const std::string params = bus::Encode(request);
  auto call = [&](const std::string& with_token) -> Result<Rep> {
    const bus::RpcRequest sent{bus::RandomId(), with_token, std::string(Req::kType), {params}};
    DET_ASSIGN_OR_RETURN(bus::Bytes body, RelayedCall(target, sent, config, direct));
    return bus::Decode<Rep>(body.data);
  };
  Result<Rep> reply = call(token);
  // A reply through the user's relay (no direct client) came over a handshake with this key too.
  const bool answered =
      client ? client->answered()
             : reply.ok() || (reply.status().code() != StatusCode::kUnavailable &&
                              reply.status().code() != StatusCode::kDeadlineExceeded);
  ConfirmGatewayKey(options, answered, security->server_public_key);
  // No answer from where det had kept the gateway, or another key there: the master's /info says
  // where it is now, or why not. Sent there again only when that cannot run it twice: a failed
  // handshake never reached the master, and a call of several attempts is one the master may
  // answer more than once.
  if (!reply.ok()) {
    const std::optional<bus::HandshakeFailure> handshake =
        client ? client->handshake_failure() : std::nullopt;
    Result<bool> changed = GatewayChangedSince(options, reply.status(), handshake);
    if (!changed.ok()) return changed.status();
    if (*changed && (handshake || config.attempts > 1)) {
      return Call<Req, Rep>(options, request, config);
    }
    if (*changed) {
      return Unavailable(reply.status().message() +
                         "; the master's gateway has moved (det knows where now), and this "
                         "request was not sent again since it may have reached the master: run "
                         "the command again");
    }
  }
  if (!reply.ok() && client && client->handshake_failure()) {
    return WithKeyAdvice(reply.status(), *client, options);
  }
  if (reply.ok() || reply.status().code() != StatusCode::kUnauthenticated) return reply;
  std::optional<Result<std::string>> renewed = RenewToken(options);
  if (!renewed) return reply;
  DET_ASSIGN_OR_RETURN(token, *renewed);
  return call(token);
}

}  // namespace det::cli
