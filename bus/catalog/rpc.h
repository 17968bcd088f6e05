#pragma once

// The request/reply gateway (ROUTER at the master, REQ at the det CLI).

#include <cstdint>
#include <string>

#include "bus/codec.h"

namespace det::bus {

struct RpcRequest {
  static constexpr std::string_view kType = "rpc.request";
  std::string request_id;  // idempotency key: a retried request reuses it
  std::string token;       // user session token; empty for unauthenticated methods
  std::string method;      // e.g. "master.info"
  Bytes params;            // the method's request message, encoded
  bool operator==(const RpcRequest&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("request_id", s.request_id, kRequired);
    v("token", s.token);
    v("method", s.method, kRequired);
    v("params", s.params);
  }
};

struct RpcReply {
  static constexpr std::string_view kType = "rpc.reply";
  std::string request_id;
  int32_t code = 0;   // det::StatusCode
  std::string error;  // message when code != 0
  Bytes body;         // the method's reply message, encoded
  bool operator==(const RpcReply&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("request_id", s.request_id, kRequired);
    v("code", s.code);
    v("error", s.error);
    v("body", s.body);
  }
};

}  // namespace det::bus
