#include "master/experiments/searcher/rng.h"

#include <sstream>

namespace det::master::searcher {

double SearchRng::Uniform() {
  const uint64_t a = engine_() >> 5, b = engine_() >> 6;
  return (static_cast<double>(a) * 67108864.0 + static_cast<double>(b)) / 9007199254740992.0;
}

uint64_t SearchRng::Below(uint64_t bound) {
  if (bound <= 1) return 0;
  const uint64_t max = bound - 1;
  uint64_t mask = max;
  for (int shift = 1; shift < 64; shift <<= 1) mask |= mask >> shift;
  while (true) {
    uint64_t value = engine_();
    if (max > 0xffffffffULL) value = (value << 32) | engine_();
    value &= mask;
    if (value <= max) return value;
  }
}

std::string SearchRng::Save() const {
  std::ostringstream out;
  out << engine_;
  return out.str();
}

Status SearchRng::Load(const std::string& state) {
  std::istringstream in(state);
  std::mt19937 engine;
  in >> engine;
  if (in.fail()) return InvalidArgument("searcher random state is not a Mersenne Twister state");
  engine_ = engine;
  return Status::Ok();
}

}  // namespace det::master::searcher
