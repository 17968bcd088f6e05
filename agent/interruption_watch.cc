#include "agent/interruption_watch.h"

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "cloud_aws/imds.h"
#include "cloud_gcp/metadata.h"

namespace det::agent {
namespace {

using Seen = Result<std::optional<InterruptionNotice>>;
const Seen kNoNotice = Seen(std::optional<InterruptionNotice>());

// Compute Engine gives a preempted VM about 30 seconds (it does not say when).
constexpr auto kGcePreemptionNotice = std::chrono::seconds(30);

InterruptionProbe Ec2Probe(const Clock& clock) {
  aws::ImdsOptions options = aws::ImdsOptionsFromEnvironment(
      [](const char* name) -> const char* { return std::getenv(name); });
  // AWS_EC2_METADATA_DISABLED keeps the AWS CLI's credential chain off IMDS; the agent was told
  // to watch it (interruption_notice: aws), which is the stronger word.
  options.disabled = false;
  auto imds = std::make_shared<aws::ImdsClient>(std::move(options), clock);
  return [imds]() -> Seen {
    Result<std::string> action = imds->Get("/latest/meta-data/spot/instance-action");
    if (action.status().code() == StatusCode::kNotFound) return kNoNotice;  // none announced
    if (!action.ok()) return action.status();
    DET_ASSIGN_OR_RETURN(InterruptionNotice notice, ParseEc2InstanceAction(*action));
    return Seen(std::optional<InterruptionNotice>(std::move(notice)));
  };
}

InterruptionProbe GceProbe(const Environment& env, const Clock& clock) {
  auto metadata = std::make_shared<gcp::MetadataClient>(gcp::MetadataOptionsFromEnvironment(env));
  return [metadata, &clock]() -> Seen {
    DET_ASSIGN_OR_RETURN(std::string preempted, metadata->Get("instance/preempted"));
    if (preempted != "TRUE") return kNoNotice;
    return Seen(std::optional<InterruptionNotice>(InterruptionNotice{
        "Compute Engine preempted the VM", UnixNanos(clock.WallNow() + kGcePreemptionNotice)}));
  };
}

}  // namespace

Result<InterruptionNotice> ParseEc2InstanceAction(const std::string& body) {
  const auto doc = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object() || !doc.contains("action") || !doc["action"].is_string()) {
    return InvalidArgument("spot/instance-action: not EC2's {\"action\", \"time\"} document: " +
                           body.substr(0, 200));
  }
  const std::string action = doc["action"].get<std::string>();
  const std::string time = doc.value("time", "");
  const std::optional<int64_t> deadline = ParseRfc3339Utc(time);
  if (!deadline) {
    return InvalidArgument("spot/instance-action: time \"" + time + "\" is not an RFC 3339 time");
  }
  return InterruptionNotice{"EC2 spot interruption: " + action + " at " + time, *deadline};
}

Result<InterruptionProbe> CloudInterruptionProbe(const std::string& cloud, const Environment& env,
                                                 const Clock& clock) {
  if (cloud == "aws") return Ec2Probe(clock);
  if (cloud == "gcp") return GceProbe(env, clock);
  return InvalidArgument("interruption_notice: \"" + cloud + "\" is not one of aws, gcp");
}

InterruptionWatch::InterruptionWatch(InterruptionProbe probe, Duration interval)
    : probe_(std::move(probe)), interval_(interval), thread_([this] { Run(); }) {}

InterruptionWatch::~InterruptionWatch() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

std::optional<InterruptionNotice> InterruptionWatch::notice() const {
  std::lock_guard lock(mu_);
  return notice_;
}

void InterruptionWatch::Run() {
  std::string last_error;
  std::unique_lock lock(mu_);
  while (!stopping_) {
    lock.unlock();
    Result<std::optional<InterruptionNotice>> seen = probe_();
    lock.lock();
    if (seen.ok() && *seen) {
      notice_ = **seen;
      return;
    }
    const std::string error = seen.ok() ? "" : seen.status().message();
    if (error != last_error && !error.empty()) {
      spdlog::warn("cannot read interruption notices: {}", error);  // once per change
    }
    last_error = error;
    wake_.wait_for(lock, interval_, [this] { return stopping_; });
  }
}

}  // namespace det::agent
