#include "common/http_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <mutex>

namespace det {
namespace {

// The body as it arrives into HttpResponse `out`. At the first bytes the length the answer
// announces (Content-Length, up to 64 MiB: a server's word is not trusted further) is reserved,
// so a ranged read of megabytes lands in one allocation rather than a doubling series of copies.
size_t AppendBody(char* data, size_t size, size_t count, void* out) {
  auto* response = static_cast<HttpResponse*>(out);
  if (response->body.empty()) {
    auto length = response->headers.find("content-length");
    if (length != response->headers.end()) {
      const unsigned long long announced = std::strtoull(length->second.c_str(), nullptr, 10);
      response->body.reserve(std::min<unsigned long long>(announced, 64ULL << 20));
    }
  }
  response->body.append(data, size * count);
  return size * count;
}

// Where a streamed response's bytes go: the request's reader, or the response's body when the
// server answered with an error (its message is read whole, as without streaming).
struct StreamTarget {
  const HttpRequest* request;
  HttpResponse* response;
  CURL* curl;
};

size_t StreamBody(char* data, size_t size, size_t count, void* target) {
  auto* t = static_cast<StreamTarget*>(target);
  long status = 0;
  curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &status);
  if (status >= 300) return AppendBody(data, size, count, t->response);
  return t->request->on_body(std::string_view(data, size * count)) ? size * count : 0;  // 0 stops
}

size_t AppendHeader(char* data, size_t size, size_t count, void* out) {
  std::string line(data, size * count);
  const size_t colon = line.find(':');
  if (colon != std::string::npos) {
    std::string name = line.substr(0, colon);
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    std::string value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(" \t"));
    value.erase(value.find_last_not_of(" \t\r\n") + 1);
    (*static_cast<std::map<std::string, std::string>*>(out))[name] = value;
  }
  return size * count;
}

long Millis(Duration d) {
  return static_cast<long>(std::chrono::duration_cast<std::chrono::milliseconds>(d).count());
}

}  // namespace

std::string UriEncode(std::string_view text, bool keep_slash) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    const bool unreserved = std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~';
    if (unreserved || (keep_slash && c == '/')) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kDigits[c >> 4];
      out += kDigits[c & 0xF];
    }
  }
  return out;
}

std::string UriDecode(std::string_view text) {
  const auto hex = [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; };
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && hex(text[i + 1]) && hex(text[i + 2])) {
      out += static_cast<char>(std::stoi(std::string(text.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

std::map<std::string, std::string> FormDecode(std::string_view text) {
  std::map<std::string, std::string> fields;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('&', start);
    if (end == std::string_view::npos) end = text.size();
    std::string pair(text.substr(start, end - start));
    std::replace(pair.begin(), pair.end(), '+', ' ');
    const size_t eq = pair.find('=');
    if (!pair.empty()) {
      fields[UriDecode(pair.substr(0, eq))] =
          eq == std::string::npos ? "" : UriDecode(pair.substr(eq + 1));
    }
    start = end + 1;
  }
  return fields;
}

std::string FormEncode(const std::vector<std::pair<std::string, std::string>>& fields) {
  std::string body;
  for (const auto& [name, value] : fields) {
    if (!body.empty()) body += '&';
    body += UriEncode(name, false) + "=" + UriEncode(value, false);
  }
  return body;
}

HttpClient::HttpClient() {
  static std::once_flag global_init;
  std::call_once(global_init, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  curl_ = curl_easy_init();
}

HttpClient::~HttpClient() { curl_easy_cleanup(static_cast<CURL*>(curl_)); }

Result<HttpResponse> HttpClient::Send(const HttpRequest& request) {
  CURL* curl = static_cast<CURL*>(curl_);
  if (curl == nullptr) return Internal("libcurl could not be initialised");
  curl_easy_reset(curl);  // keeps the connection cache
  HttpResponse response;
  curl_slist* headers = nullptr;
  for (const auto& [name, value] : request.headers) {
    headers = curl_slist_append(headers, (name + ": " + value).c_str());
  }
  headers = curl_slist_append(headers, "Expect:");  // no 100-continue round trip
  curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  // The path goes out as given: "./" and "../" are parts of S3 keys, not steps to fold.
  curl_easy_setopt(curl, CURLOPT_PATH_AS_IS, 1L);
  if (request.method == "HEAD") curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
  if (!request.body.empty() || request.method == "POST" || request.method == "PUT") {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.body.data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(request.body.size()));
  }
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS,
                   request.timeout == Duration::zero() ? 0L : Millis(request.timeout));
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, Millis(request.connect_timeout));
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  StreamTarget stream_target{&request, &response, curl};
  if (request.on_body) {
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &StreamBody);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &stream_target);
  } else {
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &AppendBody);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &response);
  }
  if (!request.unix_socket.empty()) {
    curl_easy_setopt(curl, CURLOPT_UNIX_SOCKET_PATH, request.unix_socket.c_str());
  }
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, &AppendHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &response.headers);
  const CURLcode code = curl_easy_perform(curl);
  curl_slist_free_all(headers);
  if (code != CURLE_OK) {
    std::string message =
        request.method + " " + request.url + " failed: " + curl_easy_strerror(code);
    if (code == CURLE_OPERATION_TIMEDOUT) return DeadlineExceeded(std::move(message));
    if (code == CURLE_WRITE_ERROR && request.on_body) {
      return Unavailable(request.method + " " + request.url + ": stopped by its reader");
    }
    return Unavailable(std::move(message));
  }
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.status);
  return response;
}

}  // namespace det
