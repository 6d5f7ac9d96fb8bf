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

int ReportBadOption(const std::string& option, const std::string& message) {
  InputError e;
  e.key = option;
  e.message = message;
  return ReportError(e);
}

}  // namespace meshsim::cli
