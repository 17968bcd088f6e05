#pragma once

// Names the calling thread for ps, top -H, perf and gdb (Linux keeps the first 15 bytes).

#include <pthread.h>

#include <string>

namespace det {

inline void NameThisThread(const std::string& name) {
  (void)pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
}

}  // namespace det
