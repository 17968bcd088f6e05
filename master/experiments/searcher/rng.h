#pragma once

#include <cstdint>
#include <random>
#include <string>

#include "common/status.h"

namespace det::master::searcher {

// The searcher's random numbers: a Mersenne Twister seeded from the experiment seed, drawing
// floats and bounded integers as numpy's RandomState does (53-bit floats from two draws; integers
// by masked rejection), so a seed gives the same search everywhere. Its whole state can be saved
// and restored (a master restart resumes the same sequence).
//
// Threading: not thread-safe.
class SearchRng {
 public:
  explicit SearchRng(uint32_t seed) : engine_(seed) {}

  // Uniform in [0, 1).
  double Uniform();
  // Uniform in [low, high).
  double Uniform(double low, double high) { return low + (high - low) * Uniform(); }
  // Uniform integer in [0, bound); 0 when bound is 0.
  uint64_t Below(uint64_t bound);

  // The engine's state as text (std::mt19937's stream form), and back.
  std::string Save() const;
  Status Load(const std::string& state);

 private:
  std::mt19937 engine_;
};

}  // namespace det::master::searcher
