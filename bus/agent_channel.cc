#include "bus/agent_channel.h"

#include "common/random_seed.h"

namespace det::bus {

uint64_t NewEpoch() {
  static thread_local std::mt19937_64 rng(RandomSeed());
  uint64_t epoch = 0;
  while (epoch == 0) epoch = rng();
  return epoch;
}

Header MakeHeader(const std::string& sender, uint64_t epoch, uint64_t seq, const Clock& clock) {
  Header h;
  h.sender = sender;
  h.epoch = epoch;
  h.seq = seq;
  h.sent_at = UnixNanos(clock.WallNow());
  return h;
}

}  // namespace det::bus
