#pragma once

#include <cstdint>
#include <random>
#include <string>

#include "bus/codec.h"
#include "bus/envelope.h"
#include "common/clock.h"

namespace det::bus {

// Timing of the agent channel, shared by both ends.
struct AgentChannelConfig {
  Duration heartbeat_interval = std::chrono::seconds(1);  // agent sends, master answers
  Duration silence_limit = std::chrono::seconds(5);       // no message for this long: peer lost
  Duration reconnect_window = std::chrono::seconds(25);   // master keeps a lost agent's place
  Duration resend_after = std::chrono::seconds(5);        // unacked reliable message is resent
};

// A random, non-zero process incarnation number for Header::epoch.
uint64_t NewEpoch();

// Builds a header for `sender` stamped with the clock's wall time.
Header MakeHeader(const std::string& sender, uint64_t epoch, uint64_t seq, const Clock& clock);

}  // namespace det::bus
