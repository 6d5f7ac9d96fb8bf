// Writing a file so that it is either complete or absent: the content goes to a
// temporary file next to the target (PATH.tmp), which is renamed over the target only
// when everything was written (and, if asked, checked). A failed write removes the
// temporary file and leaves any earlier version of the target untouched.
#pragma once

#include <functional>
#include <ostream>
#include <string>

#include "sim/core/status.h"

namespace meshsim {

struct AtomicWriteOptions {
  // Called with the temporary file's path once it is complete, before the rename; an
  // error stops the write (the target is not created or replaced) and is returned as is.
  std::function<Status(const std::string& tmp_path)> check;
};

// Creates the target's parent folders, streams `write` into PATH.tmp and renames it to
// `path`. `write` returns false to abandon the write (its own error is then reported as
// an I/O error "cannot write"). Failures are IoError values naming the path and the
// system's reason.
Status WriteFileAtomically(const std::string& path, const std::function<bool(std::ostream&)>& write,
                           const AtomicWriteOptions& options = {});
Status WriteFileAtomically(const std::string& path, const std::string& content,
                           const AtomicWriteOptions& options = {});

}  // namespace meshsim
