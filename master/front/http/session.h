#pragma once

// One connection of the HTTP server (internal to server.cc): reads requests with the server's
// timeouts and limits, hands each to its route on a worker (or parks it), and writes the answer,
// streamed when the route streams. `Stream` is beast::tcp_stream or an ssl_stream over one. Every
// member runs on the connection's strand; workers reach it through post().

#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <type_traits>

#include "master/front/http/server_state.h"

namespace det::master::http {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace net = boost::asio;

inline constexpr size_t kHeaderLimit = 64 << 10;
inline constexpr size_t kUnroutedBodyLimit = 1 << 20;

template <class Stream>
class Session : public std::enable_shared_from_this<Session<Stream>> {
 public:
  static constexpr bool kTls = !std::is_same_v<Stream, beast::tcp_stream>;

  // `refusal` non-empty: the connection was refused for a cap; it is answered 503 and closed.
  Session(ServerState& state, Stream stream, std::string peer, std::string refusal)
      : state_(state),
        stream_(std::move(stream)),
        peer_(std::move(peer)),
        refusal_(std::move(refusal)),
        timer_(stream_.get_executor()) {}
  ~Session() {
    if (refusal_.empty()) {
      state_.Release(peer_);
    } else {
      --state_.refusing;
    }
  }

  void Start() {
    if constexpr (kTls) {
      Lowest().expires_after(state_.limits().header_timeout);
      stream_.async_handshake(net::ssl::stream_base::server,
                              [self = this->shared_from_this()](beast::error_code ec) {
                                if (ec) return self->Failed(ec);
                                self->Begin();
                              });
    } else {
      Begin();
    }
  }

 private:
  beast::tcp_stream& Lowest() { return beast::get_lowest_layer(stream_); }

  void Begin() {
    if (!refusal_.empty()) {
      keep_alive_ = false;
      return Answer(ErrorResponse(503, refusal_));
    }
    ReadHeader();
  }

  // Keep-alive: the next request's first byte within idle_timeout, then its header within
  // header_timeout.
  void WaitForNext() {
    if (buffer_.size() > 0) return ReadHeader();  // already here (pipelined)
    Lowest().expires_after(state_.limits().idle_timeout);
    stream_.async_read_some(buffer_.prepare(4096),
                            [self = this->shared_from_this()](beast::error_code ec, size_t n) {
                              if (ec) return self->Failed(ec);
                              self->buffer_.commit(n);
                              self->ReadHeader();
                            });
  }

  void ReadHeader() {
    parser_.emplace();
    parser_->header_limit(kHeaderLimit);
    parser_->body_limit(kUnroutedBodyLimit);
    Lowest().expires_after(state_.limits().header_timeout);
    bhttp::async_read_header(
        stream_, buffer_, *parser_,
        [self = this->shared_from_this()](beast::error_code ec, size_t) { self->OnHeader(ec); });
  }

  void OnHeader(beast::error_code ec) {
    if (ec) return Failed(ec);
    const auto& header = parser_->get();
    const std::string_view target(header.target().data(), header.target().size());
    path_ = std::string(target.substr(0, target.find('?')));
    method_ = std::string(header.method_string());
    found_ = state_.router.Find(method_, path_);
    if (found_.route != nullptr) parser_->body_limit(found_.route->options.body_limit);
    keep_alive_ = header.keep_alive();
    if (parser_->is_done()) return OnBody({});
    if (beast::iequals(header[bhttp::field::expect], "100-continue")) {
      auto cont = std::make_shared<bhttp::response<bhttp::empty_body>>(bhttp::status::continue_,
                                                                       header.version());
      Lowest().expires_after(state_.limits().write_timeout);
      return bhttp::async_write(
          stream_, *cont, [self = this->shared_from_this(), cont](beast::error_code e, size_t) {
            if (e) return self->Failed(e);
            self->ReadBody();
          });
    }
    ReadBody();
  }

  void ReadBody() {
    Lowest().expires_after(state_.limits().body_timeout);
    bhttp::async_read(
        stream_, buffer_, *parser_,
        [self = this->shared_from_this()](beast::error_code ec, size_t) { self->OnBody(ec); });
  }

  void OnBody(beast::error_code ec) {
    if (ec) return Failed(ec);
    Lowest().expires_never();
    Request request = TakeRequest();
    if (request.method == "GET" || request.method == "HEAD") {
      if (std::optional<std::string> file = state_.files.Find(request.path)) {
        return OnWorker(
            [file = *file, path = request.path] { return StaticFiles::Serve(file, path); });
      }
    }
    if (found_.route == nullptr) {
      if (request.path == "/" && (request.method == "GET" || request.method == "HEAD")) {
        return Answer(NoWebUiPage());
      }
      return Answer(
          found_.other_method
              ? ErrorResponse(405, request.method + " is not allowed on " + request.path)
              : ErrorResponse(404, "no route for " + request.method + " " + request.path));
    }
    request.matches = std::move(found_.matches);
    const Router::Route* route = found_.route;
    if (route->parked) return Park(std::move(request), route);
    OnWorker([route, request = std::move(request)] {
      Response response;
      try {
        route->handler(request, response);
      } catch (const std::exception& e) {
        response = ErrorResponse(500, std::string("internal error: ") + e.what());
      }
      return response;
    });
  }

  Request TakeRequest() {
    auto message = parser_->release();
    Request request;
    request.method = method_;
    request.path = path_;
    request.peer = peer_;
    const std::string_view target(message.target().data(), message.target().size());
    if (const size_t q = target.find('?'); q != std::string_view::npos) {
      request.params = ParseQuery(target.substr(q + 1));
    }
    for (const auto& field : message) {
      request.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
    }
    request.body = std::move(message.body());
    return request;
  }

  // Runs `make` (which may block) on a worker and answers with what it returns; 503 when too many
  // requests already wait for a worker.
  template <class Make>
  void OnWorker(Make make) {
    if (++state_.waiting > state_.limits().max_waiting) {
      --state_.waiting;
      state_.WarnLimited("busy", "http: every worker busy and " +
                                     std::to_string(state_.limits().max_waiting) +
                                     " requests waiting: answered 503");
      return Answer(ErrorResponse(503, "the master is busy: try again"));
    }
    state_.workers->Post([self = this->shared_from_this(), make = std::move(make)]() mutable {
      --self->state_.waiting;
      Response response = make();
      net::post(self->stream_.get_executor(), [self, response = std::move(response)]() mutable {
        self->Answer(std::move(response));
      });
    });
  }

  // A parked request: the route answers through a Completion, whenever; no thread waits.
  void Park(Request request, const Router::Route* route) {
    if (++state_.parked > state_.limits().max_parked) {
      --state_.parked;
      state_.WarnLimited("parked", "http: " + std::to_string(state_.limits().max_parked) +
                                       " long polls already waiting: answered 503");
      return Answer(ErrorResponse(503, "too many long polls are waiting: try again"));
    }
    struct Parked {
      std::shared_ptr<Session> session;
      std::atomic<bool> answered{false};
      ~Parked() {
        if (!answered) --session->state_.parked;  // the route dropped it: the connection closes
      }
    };
    auto parked = std::make_shared<Parked>();
    parked->session = this->shared_from_this();
    Completion complete = [parked](Response response) {
      if (parked->answered.exchange(true)) return;
      auto self = parked->session;
      --self->state_.parked;
      net::post(self->stream_.get_executor(), [self, response = std::move(response)]() mutable {
        self->Answer(std::move(response));
      });
    };
    state_.workers->Post([route, request = std::move(request), complete]() {
      try {
        route->parked(request, complete);
      } catch (const std::exception& e) {
        complete(ErrorResponse(500, std::string("internal error: ") + e.what()));
      }
    });
  }

  void Answer(Response response) {
    if (response.stream) return StartStream(std::move(response));
    auto message = std::make_shared<bhttp::response<bhttp::string_body>>(
        static_cast<bhttp::status>(response.status), 11);
    Fill(*message, response);
    message->body() = std::move(response.body);
    message->prepare_payload();
    if (method_ == "HEAD") message->body().clear();  // the length stays the GET's
    Lowest().expires_after(state_.limits().write_timeout);
    bhttp::async_write(stream_, *message,
                       [self = this->shared_from_this(), message](beast::error_code ec, size_t) {
                         if (ec) return self->Failed(ec);
                         self->Done();
                       });
  }

  template <class Message>
  void Fill(Message& message, const Response& response) {
    message.set(bhttp::field::server, "det-master");
    message.set(bhttp::field::content_type, response.content_type);
    for (const auto& [name, value] : response.headers) message.set(name, value);
    message.keep_alive(keep_alive_);
  }

  // After an answer: the next request, or the end of the connection.
  void Done() {
    if (keep_alive_) return WaitForNext();
    Shutdown();
  }

  void StartStream(Response response) {
    source_ = std::move(response.stream);
    auto header = std::make_shared<bhttp::response<bhttp::empty_body>>(
        static_cast<bhttp::status>(response.status), 11);
    Fill(*header, response);
    header->chunked(true);
    auto serializer = std::make_shared<bhttp::response_serializer<bhttp::empty_body>>(*header);
    Lowest().expires_after(state_.limits().write_timeout);
    bhttp::async_write_header(
        stream_, *serializer,
        [self = this->shared_from_this(), header, serializer](beast::error_code ec, size_t) {
          if (ec) return self->Failed(ec);
          self->NextPiece();
        });
  }

  // Asks a worker for the next piece. The worker holds the source itself: the connection may close
  // (and let go of it) while Next() runs, and the source must outlive that call.
  void NextPiece() {
    if (!source_ || !Lowest().socket().is_open()) return ReleaseSource();
    state_.workers->Post([self = this->shared_from_this(), source = source_] {
      BodySource::Piece piece;
      try {
        piece = source->Next();
      } catch (const std::exception& e) {
        piece = {
            nlohmann::json{{"error", {{"grpcCode", 13}, {"httpCode", 500}, {"message", e.what()}}}}
                    .dump() +
                "\n",
            true};
      }
      net::post(self->stream_.get_executor(),
                [self, piece = std::move(piece)]() mutable { self->OnPiece(std::move(piece)); });
    });
  }

  // A piece read: written now, or kept until the one being written is out. The next one is read
  // (on a worker) while this one is written, so a source that reads storage overlaps the socket;
  // at most two pieces are held.
  void OnPiece(BodySource::Piece piece) {
    if (!Lowest().socket().is_open()) return ReleaseSource();  // closed meanwhile: read no more
    if (piece.broken) {
      ReleaseSource();
      return Close();
    }
    if (piece.data.empty() && !piece.done) {
      timer_.expires_after(source_->retry());
      return timer_.async_wait([self = this->shared_from_this()](beast::error_code ec) {
        if (!ec) self->NextPiece();
      });
    }
    if (writing_) {
      ready_ = std::move(piece);
      return;
    }
    WritePiece(std::move(piece));
  }

  void WritePiece(BodySource::Piece piece) {
    auto data = std::make_shared<std::string>(std::move(piece.data));
    const bool done = piece.done;
    if (!done) NextPiece();
    if (data->empty()) return EndStream();  // only the last piece may be empty
    writing_ = true;
    Lowest().expires_after(state_.limits().write_timeout);
    auto after = [self = this->shared_from_this(), data, done](beast::error_code ec, size_t) {
      self->writing_ = false;
      if (ec) return self->Failed(ec);
      if (!done && self->source_) self->source_->Recycle(std::move(*data));
      if (done) return self->EndStream();
      if (self->ready_) {
        BodySource::Piece next = std::move(*self->ready_);
        self->ready_.reset();
        self->WritePiece(std::move(next));
      }
    };
    net::async_write(stream_, bhttp::make_chunk(net::buffer(*data)), std::move(after));
  }

  // A stream's source is let go on a worker: its destructor may wait a moment (a checkpoint's
  // reads under way), which the connection's thread must not. (One still held when the server
  // shuts down goes with the session.)
  void ReleaseSource() {
    if (source_) state_.workers->Post([source = std::move(source_)] {});
    source_.reset();
  }

  void EndStream() {
    ReleaseSource();
    Lowest().expires_after(state_.limits().write_timeout);
    net::async_write(stream_, bhttp::make_chunk_last(),
                     [self = this->shared_from_this()](beast::error_code ec, size_t) {
                       if (ec) return self->Failed(ec);
                       self->Done();
                     });
  }

  void Failed(beast::error_code ec) {
    if (ec == beast::error::timeout) {
      ++state_.timed_out;
      return Close();
    }
    if (ec == bhttp::error::end_of_stream || ec == net::error::eof ||
        ec == net::error::operation_aborted || ec == net::error::connection_reset) {
      return Close();
    }
    keep_alive_ = false;
    if (ec == bhttp::error::body_limit) {
      return Answer(ErrorResponse(
          413, "request body: more than this route takes (" +
                   std::to_string(parser_->get().payload_size().value_or(0)) + " bytes sent)"));
    }
    if (ec == bhttp::error::header_limit) {
      return Answer(ErrorResponse(
          431, "request header: more than " + std::to_string(kHeaderLimit) + " bytes"));
    }
    if (ec.category() == bhttp::make_error_code(bhttp::error::bad_method).category()) {
      return Answer(ErrorResponse(400, "malformed HTTP request: " + ec.message()));
    }
    Close();
  }

  void Shutdown() {
    if constexpr (kTls) {
      Lowest().expires_after(std::chrono::seconds(5));
      stream_.async_shutdown(
          [self = this->shared_from_this()](beast::error_code) { self->Close(); });
    } else {
      beast::error_code ignored;
      Lowest().socket().shutdown(net::ip::tcp::socket::shutdown_send, ignored);
      Close();
    }
  }

  void Close() {
    ReleaseSource();
    timer_.cancel();
    beast::error_code ignored;
    Lowest().socket().close(ignored);
  }

  static Response NoWebUiPage() {
    Response page;
    page.SetContent(
        "<!doctype html><title>det</title><p>The WebUI is not built: run scripts/build.sh (it "
        "needs Node.js), or point master.yaml's <code>webui_dir</code> at its files. The REST API "
        "is at <a href=\"/api/v1/openapi.json\">/api/v1/openapi.json</a>.</p>",
        "text/html; charset=utf-8");
    return page;
  }

  ServerState& state_;
  Stream stream_;
  std::string peer_;
  std::string refusal_;
  net::steady_timer timer_;
  beast::flat_buffer buffer_;
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  std::string method_, path_;
  Router::Found found_;
  bool keep_alive_ = true;
  std::shared_ptr<BodySource> source_;
  bool writing_ = false;                    // a piece of the stream is being written
  std::optional<BodySource::Piece> ready_;  // the next one, read meanwhile
};

}  // namespace det::master::http
