#pragma once

// A blocking HTTP(S) client over libcurl, for the cloud providers and their metadata services.
// One HttpClient keeps one connection cache: requests to the same host reuse the connection
// (keep-alive, TLS session). Not thread-safe: one client per thread.

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "common/url.h"

namespace det {

struct HttpRequest {
  std::string method = "GET";
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;  // sent as given, in order
  std::string body;
  Duration timeout = std::chrono::seconds(30);         // the whole exchange (zero: no limit)
  Duration connect_timeout = std::chrono::seconds(5);  // TCP + TLS handshake
  // A unix socket to reach the server through (the Docker Engine's); the URL's host is then only
  // the Host header.
  std::string unix_socket;
  // When set, the body goes here as it arrives (a stream: image pull progress, followed logs)
  // instead of into HttpResponse::body (unless the status is 300 or more: an error's body is read
  // whole into HttpResponse::body); returning false ends the exchange (Send then fails with
  // Unavailable "stopped by its reader"). Called on the sending thread.
  std::function<bool(std::string_view)> on_body;
};

struct HttpResponse {
  long status = 0;
  std::map<std::string, std::string> headers;  // lower-case names; last value wins
  std::string body;
};

// RFC 3986 percent-encoding of everything but unreserved characters (and "/" when `keep_slash`),
// with upper-case hex.
std::string UriEncode(std::string_view text, bool keep_slash);
// Decodes %XX sequences (malformed ones are kept as they are).
std::string UriDecode(std::string_view text);
// An application/x-www-form-urlencoded body ("a=1&b=x%20y"), in the given order.
std::string FormEncode(const std::vector<std::pair<std::string, std::string>>& fields);
// The fields of an application/x-www-form-urlencoded body or a query string ('+' is a space); a
// field without '=' has an empty value, a name given twice keeps its last value.
std::map<std::string, std::string> FormDecode(std::string_view text);

class HttpClient {
 public:
  HttpClient();
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Any HTTP status is a response; only transport failures are errors: Unavailable (connect,
  // DNS, reset) or DeadlineExceeded (timeout), naming the method, URL and what failed.
  Result<HttpResponse> Send(const HttpRequest& request);

 private:
  void* curl_;  // CURL*, reused so that connections are kept alive
};

}  // namespace det
