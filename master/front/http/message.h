#pragma once

// A request and its answer as the master's HTTP routes see them, with no transport type: the
// server (server.h) fills a Request, a route's handler fills a Response.

#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace det::master::http {

struct Request {
  std::string method;  // "GET", "POST", ...
  std::string path;    // as sent, without the query
  std::string body;
  std::string peer;                                          // the client's address
  std::vector<std::pair<std::string, std::string>> headers;  // in order, names as sent
  std::vector<std::pair<std::string, std::string>> params;   // the query, percent-decoded
  // The route's placeholders, percent-decoded: Match(1) is the first `{name}` of its path.
  std::vector<std::string> matches;

  // The first value of header `name` (in any case), or "".
  std::string Header(std::string_view name) const;
  bool HasParam(std::string_view name) const;
  // The `index`-th value of query parameter `name`, or "".
  std::string Param(std::string_view name, size_t index = 0) const;
  size_t ParamCount(std::string_view name) const;
  // The i-th placeholder (0: the whole path); "" past the last.
  const std::string& Match(size_t i) const;
};

// A response body sent piece by piece (NDJSON follow streams, checkpoint downloads). The server
// calls Next() on a worker thread, one call at a time: again as soon as a piece comes back (it
// is written meanwhile; a piece more waits while one is being written, so at most two are held),
// and after retry() when Next() had nothing yet: no thread waits in between, however many streams
// are open. Next() may block
// briefly (a database read) but not wait for news.
class BodySource {
 public:
  struct Piece {
    std::string data;     // to send now ("" with !done: nothing yet)
    bool done = false;    // the body ends after `data`
    bool broken = false;  // the body cannot go on: the connection closes without its end, so
                          // the client sees a broken transfer rather than a shorter body
  };
  virtual ~BodySource() = default;
  virtual Piece Next() = 0;
  virtual std::chrono::milliseconds retry() const { return std::chrono::milliseconds(200); }
  // A piece's data once written, for Next() to write into again rather than into fresh memory.
  // Called on the connection's thread, maybe while Next() runs on a worker.
  virtual void Recycle(std::string written) {}
};

struct Response {
  int status = 200;
  std::string body;
  std::string content_type = "text/plain; charset=utf-8";
  std::vector<std::pair<std::string, std::string>> headers;
  std::shared_ptr<BodySource> stream;  // set: the body is streamed from it (chunked)

  void SetContent(std::string content, std::string type);
  void SetHeader(std::string name, std::string value);
  void Stream(std::string type, std::shared_ptr<BodySource> source);
};

// Answers a parked request (a long poll): call it once, from any thread, whenever the answer is
// known; later calls, and calls after the client went away, do nothing.
using Completion = std::function<void(Response)>;

// Determined's error body: {"error": {"code", "reason", "error": message}, "code", "message"}
// (json.h's Reply writes it for a Status).
nlohmann::json ErrorJson(int grpc_code, std::string_view reason, const std::string& message);
// That error body as an answer with HTTP `status` (the gRPC code gRPC-gateway maps it from).
Response ErrorResponse(int status, const std::string& message);
// A request target's query ("a=1&b=x%20y"), percent-decoded, in order.
std::vector<std::pair<std::string, std::string>> ParseQuery(std::string_view query);

// Percent-decoding of a path segment or query part ('+' is a space in a query only).
std::string PercentDecode(std::string_view text, bool plus_is_space);

}  // namespace det::master::http
