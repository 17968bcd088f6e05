#pragma once

// Shared libraries det opens only when a command needs them (dlopen), so that its every start
// loads none of them: libarchive for model definitions, libcurl for a master given by URL.

#include <dlfcn.h>

#include <string>

#include "common/status.h"

namespace det::cli {

// `name` (a soname), opened and never closed; FailedPrecondition "<why_needed> needs <name>
// (install <package>): <dlerror>" when it cannot be.
inline Result<void*> OpenSharedLibrary(const char* name, const std::string& why_needed,
                                       const char* package) {
  void* library = ::dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (library != nullptr) return library;
  const char* why = ::dlerror();
  return FailedPrecondition(why_needed + " needs " + name + " (install " + package +
                            "): " + (why ? why : "unknown error"));
}

// Sets `*function` to the library's `symbol`; false when it has none.
template <class F>
bool FindSymbol(void* library, const char* symbol, F* function) {
  *function = reinterpret_cast<F>(::dlsym(library, symbol));
  return *function != nullptr;
}

// FailedPrecondition for a library that lacks a call det makes (after FindSymbol said false).
inline Status MissingSymbol(const char* name) {
  const char* why = ::dlerror();
  return FailedPrecondition(std::string(name) +
                            " lacks a call det needs: " + (why ? why : "unknown symbol"));
}

}  // namespace det::cli
