// The plaintext connection (session.h), instantiated in a file of its own (see server_state.h).
#include "master/front/http/session.h"

namespace det::master::http {

void StartPlainSession(ServerState& state, net::ip::tcp::socket socket, std::string peer,
                       std::string refusal) {
  std::make_shared<Session<beast::tcp_stream>>(state, beast::tcp_stream(std::move(socket)),
                                               std::move(peer), std::move(refusal))
      ->Start();
}

}  // namespace det::master::http
