#pragma once

// The end of this agent's machine, as its cloud announces it ahead of time: EC2's spot
// interruption notice (IMDS `spot/instance-action`, two minutes ahead) or Compute Engine's
// preemption (`instance/preempted` TRUE, about 30 seconds ahead). The agent passes a notice to
// the master, which gives the agent no new work and has its trials checkpoint before the machine
// goes.
//
// Metadata calls block, so the watch polls on a thread of its own; the agent's loop reads
// notice(), which never blocks.

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "common/clock.h"
#include "common/environment.h"
#include "common/status.h"

namespace det::agent {

struct InterruptionNotice {
  std::string reason;    // what the cloud said, for people ("EC2 spot interruption: ...")
  int64_t deadline = 0;  // Unix nanoseconds when the machine goes; 0: not said
  bool operator==(const InterruptionNotice&) const = default;
};

// One look at the metadata service: the notice if there is one, nullopt if none (yet); an error
// when the service cannot be asked (logged, asked again next time).
using InterruptionProbe = std::function<Result<std::optional<InterruptionNotice>>()>;

// The probe for `cloud`: "aws" (IMDSv2 at AWS_EC2_METADATA_SERVICE_ENDPOINT or 169.254.169.254)
// or "gcp" (the metadata server at GCE_METADATA_HOST or metadata.google.internal).
// InvalidArgument for another name.
Result<InterruptionProbe> CloudInterruptionProbe(const std::string& cloud, const Environment& env,
                                                 const Clock& clock);

// EC2's spot/instance-action document ({"action": "terminate", "time": "...Z"}) as a notice.
Result<InterruptionNotice> ParseEc2InstanceAction(const std::string& body);

class InterruptionWatch {
 public:
  // Polls `probe` every `interval` until a notice comes (then stops: a notice is not taken back).
  InterruptionWatch(InterruptionProbe probe, Duration interval);
  ~InterruptionWatch();
  InterruptionWatch(const InterruptionWatch&) = delete;
  InterruptionWatch& operator=(const InterruptionWatch&) = delete;

  std::optional<InterruptionNotice> notice() const;

 private:
  void Run();

  InterruptionProbe probe_;
  const Duration interval_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::optional<InterruptionNotice> notice_;
  std::thread thread_;
};

}  // namespace det::agent
