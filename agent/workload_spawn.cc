#include "agent/workload_spawn.h"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <tuple>

#include "agent/shim/workload_shim.h"
#include "agent/workload_folders.h"
#include "common/clock.h"
#include "common/environment.h"
#include "common/process.h"
#include "common/strings.h"

extern char** environ;

namespace det::agent {

std::vector<std::string> WorkloadArgv(const std::vector<std::string>& entrypoint) {
  if (entrypoint.size() == 1 &&
      entrypoint[0].find_first_of(" \t\n|&;<>()$`\\\"'*?[]#~=%{}!") != std::string::npos) {
    return {"/bin/sh", "-c", entrypoint[0]};
  }
  return entrypoint;
}

std::vector<std::string> WorkloadEnvironment(const bus::WorkloadStart& start,
                                             const WorkloadHost& host, bool inherit,
                                             const std::string& info_dir) {
  std::map<std::string, std::string> env;
  for (char** e = inherit ? environ : nullptr; e && *e; ++e) {
    std::string entry(*e);
    const size_t eq = entry.find('=');
    if (eq != std::string::npos && WorkloadInherits(entry.substr(0, eq))) {
      env[entry.substr(0, eq)] = entry.substr(eq + 1);
    }
  }
  for (const auto& [key, value] : start.env) env[key] = value;
  env.erase(kRunAsVariable);  // the runner's alone (RunAsVariable)
  std::vector<std::string> gpus;
  for (const std::string& slot_id : start.slot_ids) {
    for (const bus::SlotInfo& slot : *host.slots) {
      if (slot.id == slot_id && slot.type == "cuda") {
        gpus.push_back(slot.uuid.empty() ? slot.id : slot.uuid);
      }
    }
  }
  env["DET_MASTER"] = start.master_address;
  env["DET_TASK_ID"] = start.task_id;
  env["DET_ALLOCATION_ID"] = start.allocation_id;
  env["DET_AGENT_ID"] = host.agent_id;
  env["DET_SLOT_IDS"] = Join(start.slot_ids, ",");
  env["DET_SESSION_TOKEN"] = start.session_token;
  if (!info_dir.empty()) env["DET_INFO_DIR"] = info_dir;
  if (inherit) env["CUDA_VISIBLE_DEVICES"] = Join(gpus, ",");
  std::vector<std::string> entries;
  entries.reserve(env.size());
  for (const auto& [key, value] : env) entries.push_back(key + "=" + value);
  return entries;
}

namespace {

// What the account database says of an account (whether it knows it, with this uid).
struct KnownAccount {
  bool known = false;
  std::string home;
  std::vector<gid_t> groups;
};

KnownAccount LookUpAccount(const bus::AgentUserGroup& account) {
  KnownAccount found;
  struct passwd entry {};
  struct passwd* known = nullptr;
  std::vector<char> buffer(16384);
  if (getpwnam_r(account.user.c_str(), &entry, buffer.data(), buffer.size(), &known) != 0 ||
      !known || known->pw_uid != static_cast<uid_t>(account.uid)) {
    return found;
  }
  found.known = true;
  found.home = known->pw_dir;
  int count = 64;
  found.groups.resize(count);
  if (getgrouplist(account.user.c_str(), static_cast<gid_t>(account.gid), found.groups.data(),
                   &count) < 0) {
    found.groups.resize(count);  // count is now how many there are
    getgrouplist(account.user.c_str(), static_cast<gid_t>(account.gid), found.groups.data(),
                 &count);
  }
  found.groups.resize(std::max(count, 1));
  return found;
}

// When the local account files last changed (inode, mtime, ctime and size of both, as one key).
std::string AccountFilesStamp() {
  std::string stamp;
  for (const char* path : {"/etc/passwd", "/etc/group"}) {
    struct stat info {};
    if (stat(path, &info) == 0) {
      stamp += std::to_string(info.st_ino) + "/" + std::to_string(info.st_mtim.tv_sec) + "." +
               std::to_string(info.st_mtim.tv_nsec) + "/" + std::to_string(info.st_ctim.tv_sec) +
               "." + std::to_string(info.st_ctim.tv_nsec) + "/" + std::to_string(info.st_size) +
               ";";
    }
  }
  return stamp;
}

// Reading the account database (files or NSS) for every workload costs more than starting it, so
// answers are kept: for kAccountAnswerLife, and only while /etc/passwd and /etc/group are
// unchanged (a local change counts at once; one through NSS within the life, as nscd keeps them).
constexpr auto kAccountAnswerLife = std::chrono::seconds(30);
constexpr size_t kMaxAccountAnswers = 1024;

KnownAccount CachedAccount(const bus::AgentUserGroup& account) {
  struct Answer {
    KnownAccount account;
    std::string stamp;
    MonoTime at;
  };
  static std::mutex mu;
  static std::map<std::tuple<std::string, int64_t, int64_t>, Answer> answers;
  const auto key = std::make_tuple(account.user, int64_t{account.uid}, int64_t{account.gid});
  const MonoTime now = RealClock::Instance().Now();
  const std::string stamp = AccountFilesStamp();
  std::lock_guard lock(mu);
  auto it = answers.find(key);
  if (it != answers.end() && it->second.stamp == stamp &&
      now - it->second.at < kAccountAnswerLife) {
    return it->second.account;
  }
  if (answers.size() >= kMaxAccountAnswers) answers.clear();
  Answer& answer = answers[key];
  answer = {LookUpAccount(account), stamp, now};
  return answer.account;
}

}  // namespace

AccountOnHost AccountGroups(const bus::AgentUserGroup& account, const std::string& dir) {
  KnownAccount found = CachedAccount(account);
  if (!found.known) return {{static_cast<gid_t>(account.gid)}, dir};
  return {std::move(found.groups), found.home};
}

std::string RunAsVariable(const bus::AgentUserGroup& account, const std::string& dir) {
  const AccountOnHost found = AccountGroups(account, dir);
  std::vector<std::string> ids;
  for (gid_t group : found.groups) ids.push_back(std::to_string(group));
  return std::string(kRunAsVariable) + "=" + std::to_string(account.uid) + ":" +
         std::to_string(account.gid) + ":" + Join(ids, ",") + ":" + found.home + ":" + account.user;
}

Status GiveFolder(const std::string& path, const bus::AgentUserGroup& account) {
  if (geteuid() != 0) return Status::Ok();
  const auto uid = static_cast<uid_t>(account.uid);
  const auto gid = static_cast<gid_t>(account.gid);
  auto refused = [&](const std::string& what) {
    return Internal("cannot give " + what + " to " + account.user + " (uid " +
                    std::to_string(account.uid) + "): " + std::strerror(errno));
  };
  if (chown(path.c_str(), uid, gid) != 0 || chmod(path.c_str(), 0700) != 0) return refused(path);
  // What the agent made inside for the run (its info files' folder, output files) is its too;
  // links are changed themselves, never what they point to.
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(path, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (lchown(it->path().c_str(), uid, gid) != 0) return refused(it->path().string());
  }
  if (ec) return Internal("cannot give " + path + " to " + account.user + ": " + ec.message());
  return Status::Ok();
}

Result<bus::AgentUserGroup> HostAccount(const std::string& user) {
  std::vector<char> buffer(16384);
  passwd entry{};
  passwd* found = nullptr;
  if (getpwnam_r(user.c_str(), &entry, buffer.data(), buffer.size(), &found) != 0 || !found) {
    return NotFound("no account \"" + user + "\" on this host (getpwnam)");
  }
  bus::AgentUserGroup account{static_cast<int32_t>(found->pw_uid),
                              static_cast<int32_t>(found->pw_gid), user, ""};
  group group_entry{};
  group* group_found = nullptr;
  if (getgrgid_r(found->pw_gid, &group_entry, buffer.data(), buffer.size(), &group_found) == 0 &&
      group_found) {
    account.group = group_found->gr_name;
  }
  if (account.group.empty()) account.group = std::to_string(account.gid);
  return account;
}

void KeepFromTasks(const std::string& path, const std::string& what) {
  struct stat st {};
  if (path.empty() || geteuid() != 0 || stat(path.c_str(), &st) != 0) return;
  if ((st.st_mode & 077) == 0) return;
  if (chmod(path.c_str(), 0600) != 0) {
    spdlog::warn("{} {} is open to other users (mode {:o}) and cannot be closed: {}", what, path,
                 st.st_mode & 0777, std::strerror(errno));
    return;
  }
  spdlog::warn("{} {} was open to other users (mode {:o}): now 0600, as tasks run on this host",
               what, path, st.st_mode & 0777);
}

Status OpenSharedFolder(const std::string& path) {
  if (geteuid() != 0) return Status::Ok();
  std::error_code made;
  std::filesystem::create_directories(path, made);
  struct stat st {};
  if (made || stat(path.c_str(), &st) != 0) {
    return Internal("cannot make the checkpoint folder " + path + ": " +
                    (made ? made.message() : std::strerror(errno)));
  }
  if (st.st_uid != geteuid() || (st.st_mode & S_IWOTH) != 0) return Status::Ok();
  if (chmod(path.c_str(), 01777) != 0) {
    return Internal("cannot open " + path + " to tasks' accounts: " + std::strerror(errno));
  }
  spdlog::info("{}: mode 1777 (sticky), so that tasks of every account write their own entries",
               path);
  return Status::Ok();
}

void ReclaimFolder(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0 || (st.st_uid == geteuid() && st.st_gid == getegid())) return;
  if (chown(path.c_str(), geteuid(), getegid()) == 0) (void)chmod(path.c_str(), 0755);
}

std::string BesideThisProgram(const std::string& name) {
  std::error_code ec;
  return (std::filesystem::read_symlink("/proc/self/exe", ec).parent_path() / name).string();
}

Result<pid_t> SpawnUnderShim(const std::string& shim, const std::vector<std::string>& workload_argv,
                             const std::vector<std::string>& env, const std::string& dir) {
  std::vector<std::string> argv = {shim, kWorkloadShimArg, dir};
  argv.insert(argv.end(), workload_argv.begin(), workload_argv.end());
  const std::string out = dir + "/" + kStdoutFile, err = dir + "/" + kStderrFile;

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_APPEND | O_CREAT, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_APPEND | O_CREAT, 0644);
  posix_spawn_file_actions_addchdir_np(&actions, dir.c_str());
  posix_spawnattr_t attr;
  InitSpawnWithDefaultSignals(attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  return SpawnPrepared(argv, env, actions, attr);
}

}  // namespace det::agent
