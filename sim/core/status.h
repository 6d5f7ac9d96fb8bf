// Errors as values: what bad input and failed file operations produce below the CLI.
//
// An InputError names where the problem is (file, line, column, dotted key) and what was
// expected versus found. Fields that do not apply are left empty / zero. Its kind says
// whose fault it is: the input's (the CLI exits 2) or the host's, a file that cannot be
// written or read although the input is fine (disk full, unwritable folder; exit 4), or
// meshsim's own (exit 1).
// Result<T> holds either a value or an InputError, in the spirit of std::expected.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace meshsim {

enum class ErrorKind {
  kBadInput,  // the input is wrong: a user must change a file or an argument
  kIo,        // the input is fine but the host failed a file operation
  kInternal,  // meshsim broke its own promise (e.g. an output it wrote does not load)
};

struct InputError {
  ErrorKind kind = ErrorKind::kBadInput;
  std::string file;     // empty when not tied to a file
  int line = 0;         // 1-based; 0 when unknown
  int column = 0;       // 1-based; 0 when unknown
  std::string key;      // dotted key, e.g. "plan.tp"; empty when not tied to a key
  std::string message;  // what was expected and what was found

  // "file:line:col: key: message", omitting the parts that are unknown.
  std::string ToString() const;
};

// A failed file operation on `path` (kind kIo), e.g. IoError("out/a.csv", "cannot write: ...").
InputError IoError(const std::string& path, const std::string& message);
// Bad input in `file` (no line or key), e.g. BadInput("out/results.csv", "--resume: ...").
InputError BadInput(const std::string& file, const std::string& message);
// Bad input at the dotted `key` (no file yet: the loader locates it), e.g.
// BadKey("plan.tp", "expected a divisor of 32 heads, found 3").
InputError BadKey(const std::string& key, const std::string& message);

template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}           // NOLINT: implicit by design
  Result(InputError error) : v_(std::move(error)) {}  // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return ok(); }
  const T& value() const& {
    assert(ok());
    return std::get<T>(v_);
  }
  T& value() & {
    assert(ok());
    return std::get<T>(v_);
  }
  T&& value() && {
    assert(ok());
    return std::get<T>(std::move(v_));
  }
  const InputError& error() const {
    assert(!ok());
    return std::get<InputError>(v_);
  }

 private:
  std::variant<T, InputError> v_;
};

// For operations that produce nothing but may fail.
struct Ok {};
using Status = Result<Ok>;

}  // namespace meshsim
