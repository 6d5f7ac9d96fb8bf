// Exit codes of every subcommand, and the one way the CLI reports an error value.
//
// 0 success; 1 internal error (a bug in meshsim); 2 bad input (parse error, unknown key,
// impossible plan, missing file); 3 the plan does not fit in device memory; 4 the host
// failed a file operation although the input was fine (disk full, unwritable folder).
#pragma once

#include <string>

#include "sim/core/status.h"

namespace meshsim::cli {

enum ExitCode { kOk = 0, kInternal = 1, kBadInput = 2, kDoesNotFit = 3, kIoError = 4 };

// Prints "meshsim: error: <e>" (or "meshsim: internal error: <e>") on stderr and
// returns the exit code of e.kind: kBadInput, kIoError or kInternal.
int ReportError(const InputError& e);

// A bad command-line option (`--op`): ReportError of a bad-input error that names it.
int ReportBadOption(const std::string& option, const std::string& message);

}  // namespace meshsim::cli
