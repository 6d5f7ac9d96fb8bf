// meshsim's error values as Python exceptions.
//
// A binding that gets an InputError throws it as Raised; the translator that Register
// installs turns it, with the GIL held, into the package's exception of its kind
// (meshsim/_errors.py): kBadInput -> meshsim.InputError (a ValueError), kIo ->
// meshsim.IoError (an OSError), kInternal -> meshsim.InternalError (a RuntimeError), each
// carrying file, line, column, key and message as attributes.
#pragma once

#include <pybind11/pybind11.h>

#include <utility>

#include "sim/core/status.h"

namespace meshsim::python {

struct Raised {
  InputError error;
};

[[noreturn]] inline void Raise(InputError error) { throw Raised{std::move(error)}; }

// The value of `r`, or raises its error.
template <typename T>
T Unwrap(Result<T> r) {
  if (!r.ok()) Raise(r.error());
  return std::move(r).value();
}

inline void Check(const Status& s) {
  if (!s.ok()) Raise(s.error());
}

// An InputError of kind kBadInput naming `key` (an argument of the Python call).
InputError ArgumentError(const std::string& key, const std::string& message);

// Installs the translator of Raised.
void RegisterErrors();

}  // namespace meshsim::python
