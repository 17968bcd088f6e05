#pragma once

// DET_MASTER (or -m) as Determined's users and the Core API write it: the master's REST URL,
// "http(s)://host:port". Inside a task DET_MASTER is that URL. det talks to the master's gateway,
// so it asks the master where that is (GET <url>/info, which needs no login) and reaches
// the gateway on the URL's host. libcurl is opened only then (dlopen), so every other det start
// loads no HTTP or TLS library.

#include <string>

#include "common/status.h"

namespace det::cli {

// How to trust an https master: Determined's variables.
struct MasterTls {
  std::string cert_file;  // DET_MASTER_CERT_FILE: a PEM file, or "noverify"
  std::string cert_pem;   // DET_MASTER_CERT: the certificate itself (what trial runs are given)
};

bool IsMasterUrl(const std::string& master);

// DET_MASTER or -m as given, in the one form det keeps sessions and keys under: as Determined's
// clients read it, "host", "host:port" and "http(s)://host[:port][/path]" are the master's REST
// URL, written "scheme://host:port[/path]" (port 8080 for a bare host, else the scheme's); the
// gateway itself is named "tcp://host[:port]" and kept as given. InvalidArgument naming the value
// for one with no host, a bad port, a user, query or fragment.
Result<std::string> CanonicalMaster(const std::string& master);

// The gateway behind a master's URL, as its /info says.
struct MasterGateway {
  std::string endpoint;    // "tcp://host:port"
  std::string public_key;  // its CURVE public key (Z85); "" when the master runs in plaintext
};

// The gateway behind the master at `url`; Unavailable naming the URL when the master does not
// answer, InvalidArgument for a URL that is not one, FailedPrecondition when the answer has no
// gateway (not a det master) or libcurl cannot be opened.
Result<MasterGateway> GatewayOfMasterUrl(const std::string& url, const MasterTls& tls);

// The gateway port in GET /info's JSON body (exposed for tests).
Result<int> GatewayPortOfMasterInfo(const std::string& body);
// The gateway's public key in GET /info's JSON body: "" when it names none (plaintext), an error
// when it is not a key.
Result<std::string> GatewayKeyOfMasterInfo(const std::string& body);

}  // namespace det::cli
