#include "sim/cli/exit_codes.h"

#include <iostream>

namespace meshsim::cli {

int ReportError(const InputError& e) {
  std::cerr << "meshsim: error: " << e.ToString() << "\n";
  return e.kind == ErrorKind::kIo ? kIoError : kBadInput;
}

}  // namespace meshsim::cli
