#include "cli/config_files.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace det::cli {
namespace {

namespace fs = std::filesystem;

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

}  // namespace

std::string ConfigFile(const std::string& name, const char* override_env) {
  if (std::string file = Env(override_env); !file.empty()) return file;
  if (std::string config = Env("XDG_CONFIG_HOME"); !config.empty()) {
    return config + "/det/" + name;
  }
  return Env("HOME") + "/.config/det/" + name;
}

Status MakePrivateFolder(const std::string& folder) {
  std::error_code error;
  if (fs::exists(folder, error)) return Status::Ok();
  fs::create_directories(fs::path(folder).parent_path(), error);
  if (::mkdir(folder.c_str(), 0700) != 0 && errno != EEXIST) {
    return InvalidArgument("cannot make " + folder + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

Result<nlohmann::json> LoadJsonFileStrictly(const std::string& path) {
  std::ifstream in(path);
  if (!in) return nlohmann::json::object();  // none yet
  std::stringstream text;
  text << in.rdbuf();
  auto doc = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object()) {
    return FailedPrecondition(path + " does not read as a JSON object: mend or remove it");
  }
  return doc;
}

nlohmann::json LoadJsonFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return nlohmann::json::object();
  std::stringstream text;
  text << in.rdbuf();
  auto doc = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  return doc.is_object() ? doc : nlohmann::json::object();
}

Status SaveJsonFile(const std::string& path, const nlohmann::json& doc, const std::string& what) {
  DET_RETURN_IF_ERROR(MakePrivateFolder(fs::path(path).parent_path().string()));
  const std::string tmp = path + ".tmp" + std::to_string(getpid());
  ::unlink(tmp.c_str());  // one a crashed det of this pid left
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return InvalidArgument("cannot write " + what + " " + tmp);
  const std::string text = doc.dump(2) + "\n";
  const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  if (!written || std::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    return InvalidArgument("cannot write " + what + " " + path);
  }
  return Status::Ok();
}

Status UpdateJsonFile(const std::string& path, const std::string& what, bool strict,
                      const std::function<Status(nlohmann::json& doc)>& change) {
  DET_RETURN_IF_ERROR(MakePrivateFolder(fs::path(path).parent_path().string()));
  const std::string lock_path = path + ".lock";
  struct LockFile {  // closing it releases the lock, whatever `change` does
    int fd;
    ~LockFile() {
      if (fd >= 0) ::close(fd);
    }
  } lock{::open(lock_path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600)};
  int locked = -1;
  if (lock.fd >= 0) {
    do locked = ::flock(lock.fd, LOCK_EX);
    while (locked != 0 && errno == EINTR);
  }
  if (locked != 0) {
    return InvalidArgument("cannot lock " + what + " (" + lock_path + "): " + std::strerror(errno));
  }
  nlohmann::json doc;
  if (strict) {
    DET_ASSIGN_OR_RETURN(doc, LoadJsonFileStrictly(path));
  } else {
    doc = LoadJsonFile(path);
  }
  DET_RETURN_IF_ERROR(change(doc));
  return SaveJsonFile(path, doc, what);
}

}  // namespace det::cli
