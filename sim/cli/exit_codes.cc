#include "sim/cli/exit_codes.h"

#include <iostream>

namespace meshsim::cli {

int ReportError(const InputError& e) {
  switch (e.kind) {
    case ErrorKind::kBadInput:
      std::cerr << "meshsim: error: " << e.ToString() << "\n";
      return kBadInput;
    case ErrorKind::kIo:
      std::cerr << "meshsim: error: " << e.ToString() << "\n";
      return kIoError;
    case ErrorKind::kInternal:
      std::cerr << "meshsim: internal error: " << e.ToString() << "\n";
      return kInternal;
  }
  return kInternal;
}

}  // namespace meshsim::cli
