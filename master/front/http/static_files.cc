#include "master/front/http/static_files.h"

#include <filesystem>

#include "common/files.h"

namespace det::master::http {
namespace {

namespace fs = std::filesystem;

std::string ContentTypeOf(const fs::path& file) {
  const std::string ext = file.extension().string();
  if (ext == ".html") return "text/html; charset=utf-8";
  if (ext == ".js" || ext == ".mjs") return "text/javascript; charset=utf-8";
  if (ext == ".css") return "text/css; charset=utf-8";
  if (ext == ".json" || ext == ".map") return "application/json";
  if (ext == ".svg") return "image/svg+xml";
  if (ext == ".png") return "image/png";
  if (ext == ".ico") return "image/x-icon";
  if (ext == ".woff2") return "font/woff2";
  if (ext == ".txt") return "text/plain; charset=utf-8";
  return "application/octet-stream";
}

}  // namespace

std::optional<std::string> StaticFiles::Find(std::string_view path) const {
  if (folder_.empty() || !path.starts_with('/')) return std::nullopt;
  const std::string decoded = PercentDecode(path, /*plus_is_space=*/false);
  fs::path relative = decoded == "/" ? fs::path("index.html") : fs::path(decoded.substr(1));
  for (const auto& part : relative) {
    if (part == ".." || part == ".") return std::nullopt;  // nothing outside the folder
  }
  std::error_code ec;
  const fs::path file = fs::path(folder_) / relative;
  if (!fs::is_regular_file(file, ec)) return std::nullopt;
  return file.string();
}

Response StaticFiles::Serve(const std::string& file, std::string_view path) {
  Response res;
  std::optional<std::string> content = ReadFileText(file);
  if (!content) {
    res.status = 404;
    res.SetContent(R"({"error": "not found"})", "application/json");
    return res;
  }
  res.SetContent(std::move(*content), ContentTypeOf(file));
  res.SetHeader("Cache-Control",
                path.starts_with("/assets/") ? "public, max-age=31536000, immutable" : "no-cache");
  return res;
}

}  // namespace det::master::http
