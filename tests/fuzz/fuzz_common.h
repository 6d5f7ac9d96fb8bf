// Shared by the libFuzzer targets of tests/fuzz (built with MESHSIM_FUZZ).
//
// Each target feeds its input to one loader and checks what every input must give: an
// InputError with a message, or a value that the rest of the program may rely on. A
// broken promise aborts (a finding, as a sanitizer report or a failed assert is).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#include "sim/core/status.h"

namespace meshsim::fuzz {

// The source tree, for the bundled files that inputs may reference.
inline std::string SourcePath(const std::string& relative) {
  return std::string(MESHSIM_SOURCE_DIR) + "/" + relative;
}

// Aborts with `what` (and the error, if any) when `ok` is false.
inline void Require(bool ok, const std::string& what, const InputError* e = nullptr) {
  if (ok) return;
  std::fprintf(stderr, "fuzz check failed: %s%s%s\n", what.c_str(), e ? ": " : "",
               e ? e->ToString().c_str() : "");
  std::abort();
}

// Every InputError says what is wrong.
inline void CheckError(const InputError& e) {
  Require(!e.message.empty(), "an InputError without a message", &e);
  Require(e.line >= 0 && e.column >= 0, "an InputError with a negative position", &e);
}

}  // namespace meshsim::fuzz
