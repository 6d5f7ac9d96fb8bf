#include "sim/core/status.h"

namespace meshsim {

std::string InputError::ToString() const {
  std::string out;
  if (!file.empty()) {
    out += file;
    if (line > 0) {
      out += ":" + std::to_string(line);
      if (column > 0) out += ":" + std::to_string(column);
    }
    out += ": ";
  }
  if (!key.empty()) out += key + ": ";
  out += message;
  return out;
}

InputError IoError(const std::string& path, const std::string& message) {
  InputError e;
  e.kind = ErrorKind::kIo;
  e.file = path;
  e.message = message;
  return e;
}

InputError BadInput(const std::string& file, const std::string& message) {
  InputError e;
  e.file = file;
  e.message = message;
  return e;
}

InputError BadKey(const std::string& key, const std::string& message) {
  InputError e;
  e.key = key;
  e.message = message;
  return e;
}

}  // namespace meshsim
