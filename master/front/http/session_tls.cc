// The TLS connection (session.h), instantiated in a file of its own (see server_state.h).
#include "master/front/http/session.h"

namespace det::master::http {

void StartTlsSession(ServerState& state, net::ip::tcp::socket socket, std::string peer,
                     std::string refusal) {
  using TlsStream = beast::ssl_stream<beast::tcp_stream>;
  std::make_shared<Session<TlsStream>>(state,
                                       TlsStream(beast::tcp_stream(std::move(socket)), *state.ssl),
                                       std::move(peer), std::move(refusal))
      ->Start();
}

}  // namespace det::master::http
